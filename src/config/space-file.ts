/**
 * A search space for `packbot optimize`, format `packbot.space/v1`: which strategy fields vary and
 * over what (`range` of numbers, linear or log, optionally on a step; or a `choice` of values),
 * what to maximise and which constraints a candidate must meet. Every parameter is checked
 * against the strategy schema: the field must exist and every value the space can give must be
 * a valid value of that field, so a mistake is reported at its line, not found mid-search.
 */
import { z } from 'zod';
import { StrategyFile } from '../strategy/strategy-schema.js';

export const SPACE_FORMAT = 'packbot.space/v1';

export const OBJECTIVES = ['mean_net_pnl', 'median_net_pnl', 'p5_net_pnl', 'mean_log_growth'] as const;
export type Objective = (typeof OBJECTIVES)[number];

const RangeParam = z.strictObject({
  range: z.tuple([z.number().finite(), z.number().finite()]).describe('[lo, hi], both included'),
  log: z.boolean().default(false).describe('sample evenly in log space (lo must be above 0)'),
  step: z
    .number()
    .positive()
    .finite()
    .optional()
    .describe('values are lo + k x step (integer fields: 1 by default)'),
});

const ChoiceParam = z.strictObject({
  choice: z.array(z.unknown()).min(1).describe('the values to choose from (any type the field takes)'),
});

export const SpaceParam = z.union([RangeParam, ChoiceParam]);
export type SpaceParam = z.output<typeof SpaceParam>;

type AnyZod = z.ZodType & { _zod: { def: Record<string, unknown>; bag?: Record<string, unknown> } };

/** The strategy field at a dotted path (`sell.list.markup`), or why there is none. */
function strategyField(path: string): { schema: z.ZodType } | { error: string } {
  const parts = path.split('.');
  let node = StrategyFile as unknown as AnyZod;
  let where = '';
  for (const part of parts) {
    const obj = unwrap(node);
    if (obj._zod.def.type !== 'object')
      return { error: `'${where}' is not a section of the strategy: '${path}' cannot be set` };
    const shape = (obj as unknown as z.ZodObject).shape as Record<string, AnyZod>;
    if (!Object.hasOwn(shape, part))
      return {
        error: `no strategy field '${where ? `${where}.` : ''}${part}' (${where || 'the strategy'} has: ${Object.keys(shape).join(', ')})`,
      };
    node = shape[part]!;
    where = where ? `${where}.${part}` : part;
  }
  const leaf = unwrap(node)._zod.def.type;
  if (leaf === 'object' || leaf === 'union' || path === 'format')
    return { error: `'${path}' is not a single value: vary the fields inside it` };
  return { schema: node };
}

/** The schema under default/prefault/optional wrappers. */
function unwrap(s: AnyZod): AnyZod {
  let cur = s;
  while (['default', 'prefault', 'optional', 'nullable', 'readonly'].includes(cur._zod.def.type as string))
    cur = cur._zod.def.innerType as AnyZod;
  return cur;
}

function isIntegerField(s: z.ZodType): boolean {
  const inner = unwrap(s as AnyZod) as unknown as { isInt?: boolean };
  return inner.isInt === true;
}

/** The values a range parameter can take: snapped to its step, within [lo, hi]. */
export function snap(
  param: { range: [number, number]; step?: number | undefined },
  v: number,
  integer: boolean,
): number {
  const [lo, hi] = param.range;
  const step = param.step ?? (integer ? 1 : undefined);
  // No step: four significant digits, so a chosen value reads cleanly in best.yaml.
  if (step === undefined) return Math.min(hi, Math.max(lo, Number(v.toPrecision(4))));
  const k = Math.min(Math.floor((hi - lo) / step + 1e-9), Math.max(0, Math.round((v - lo) / step)));
  return Math.round((lo + k * step) * 1e9) / 1e9;
}

export interface ResolvedParam {
  path: string;
  spec: SpaceParam;
  integer: boolean;
}

/** Resolves every parameter's field (call on a validated space: the checks have passed). */
export function resolveParams(space: SpaceFile): ResolvedParam[] {
  return Object.entries(space.params).map(([path, spec]) => {
    const f = strategyField(path);
    if ('error' in f) throw new Error(f.error);
    return { path, spec, integer: isIntegerField(f.schema) };
  });
}

export const SpaceFile = z
  .strictObject({
    format: z.literal(SPACE_FORMAT),
    description: z.string().default(''),
    params: z
      .record(z.string(), SpaceParam)
      .refine((p) => Object.keys(p).length > 0, { message: 'give at least one parameter' })
      .describe(
        'strategy field path (e.g. open.min_ev_ratio) -> {range: [lo, hi], log, step} or {choice: [...]}',
      ),
    objective: z
      .enum(OBJECTIVES)
      .default('mean_net_pnl')
      .describe('what the search maximises (net P&L in USD over the horizon; log growth of equity per path)'),
    constraints: z
      .strictObject({
        p_ruin_max: z.number().min(0).max(1).optional().describe('largest share of paths ruined'),
        p_loss_max: z.number().min(0).max(1).optional().describe('largest share of paths ending at a loss'),
        max_drawdown_p95_max: z
          .number()
          .nonnegative()
          .optional()
          .describe('largest 95th percentile of the maximum drawdown (USD)'),
      })
      .prefault({})
      .describe('a candidate breaking one is infeasible (never chosen), not penalised'),
  })
  .superRefine((space, ctx) => {
    for (const [path, spec] of Object.entries(space.params)) {
      const at = (...rest: (string | number)[]) => ['params', path, ...rest];
      const field = strategyField(path);
      if ('error' in field) {
        ctx.addIssue({ code: 'custom', path: at(), message: field.error });
        continue;
      }
      const check = (value: unknown, where: (string | number)[]) => {
        const r = field.schema.safeParse(value);
        if (!r.success)
          ctx.addIssue({
            code: 'custom',
            path: where,
            message: `${JSON.stringify(value)} is not a valid ${path}: ${r.error.issues[0]?.message ?? 'invalid'}`,
          });
      };
      if ('choice' in spec) {
        spec.choice.forEach((v, i) => {
          check(v, at('choice', i));
        });
        continue;
      }
      const kind = unwrap(field.schema as AnyZod)._zod.def.type;
      if (kind !== 'number') {
        ctx.addIssue({ code: 'custom', path: at('range'), message: `${path} is not a number: use choice` });
        continue;
      }
      const [lo, hi] = spec.range;
      if (!(lo < hi)) ctx.addIssue({ code: 'custom', path: at('range'), message: 'needs lo < hi' });
      if (spec.log && !(lo > 0))
        ctx.addIssue({ code: 'custom', path: at('log'), message: 'a log range needs lo > 0' });
      if (isIntegerField(field.schema) && spec.step !== undefined && !Number.isInteger(spec.step))
        ctx.addIssue({
          code: 'custom',
          path: at('step'),
          message: `${path} is an integer: step must be one`,
        });
      check(lo, at('range', 0));
      check(hi, at('range', 1));
    }
  });

export type SpaceFile = z.output<typeof SpaceFile>;
