/**
 * The simulator reads every request with the same zod schemas the client checks before sending
 * (the operations table's `request`), so the two cannot drift apart: a request the client would
 * refuse, the simulator answers 400, naming the fields. Query strings arrive as text over HTTP; the
 * schema's number fields are read as numbers first, and parameters the schema does not name are
 * ignored (as a web service ignores unknown query parameters).
 */
import type { z } from 'zod';
import { BadRequestError } from '../api/errors.js';
import { OPERATIONS, type Operation } from '../api/operations.js';
import { DEFAULT_CATEGORY, DEFAULT_QUANTITY, DEFAULT_RISK_LEVEL } from '../api/rules.js';
import type { Category, PackPurchaseRequest, RiskLevel } from '../api/schemas.js';
import { formatPath } from '../core/format-path.js';

/** The validated input of an operation (undefined for those that take none). */
export type Input<O extends Operation> = (typeof OPERATIONS)[O]['request'] extends z.ZodType
  ? z.output<(typeof OPERATIONS)[O]['request']>
  : undefined;

type Def = { type: string; innerType?: Field };
type Field = { def: Def };

/** The type at the core of an optional/nullable/defaulted field. */
function coreType(field: Field | undefined): string | undefined {
  let f = field;
  while (f?.def.innerType) f = f.def.innerType;
  return f?.def.type;
}

function queryOf(schema: z.ZodType, query: Record<string, unknown>): Record<string, unknown> {
  const shape = (schema as unknown as { shape?: Record<string, Field> }).shape ?? {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!Object.hasOwn(shape, name)) continue;
    out[name] =
      typeof value === 'string' && coreType(shape[name]) === 'number' && /^-?\d+(\.\d+)?$/.test(value)
        ? Number(value)
        : value;
  }
  return out;
}

export function parseRequest<O extends Operation>(
  op: O,
  req: { body?: unknown; query?: Record<string, unknown> | undefined },
): Input<O> {
  const { method, request: schema } = OPERATIONS[op];
  if (!schema) return undefined as Input<O>;
  let input: unknown;
  if (method === 'GET') input = queryOf(schema, req.query ?? {});
  else {
    input = req.body;
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw new BadRequestError('request body must be a JSON object');
  }
  const r = schema.safeParse(input);
  if (!r.success)
    throw new BadRequestError(
      r.error.issues.map((i) => `${formatPath(i.path) || 'request'}: ${i.message}`).join('; '),
    );
  return r.data as Input<O>;
}

/** A pack purchase with the spec's defaults spelled out (what the order's fingerprint is taken of). */
export interface PackPurchaseInput {
  pack_type: string;
  category: Category;
  quantity: number;
  risk_level: RiskLevel;
}

export function packPurchaseInput(r: PackPurchaseRequest): PackPurchaseInput {
  return {
    pack_type: r.pack_type,
    category: r.category ?? DEFAULT_CATEGORY,
    quantity: r.quantity ?? DEFAULT_QUANTITY,
    risk_level: r.risk_level ?? DEFAULT_RISK_LEVEL,
  };
}
