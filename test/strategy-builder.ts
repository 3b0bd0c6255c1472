/**
 * The one way a test builds a strategy: a partial override deep-merged over a base, then parsed by
 * the real schema (StrategyFile), so a test can neither build a strategy the bot would refuse nor
 * skip a default the schema fills in.
 *
 * Merge rule: where both the base and the override hold a plain object, the two merge key by key,
 * recursively; anything else in the override (an array, a primitive, null) replaces the base's value
 * whole; a key the override leaves undefined keeps the base's value. So `{ sell: { list: { markup:
 * 1.4 } } }` changes one field and keeps every other field of the base's `sell`.
 */
import type { z } from 'zod';
import { STRATEGY_FORMAT, type Strategy, StrategyFile } from '../src/strategy/strategy-schema.js';

type DeepPartial<T> = T extends readonly (infer E)[]
  ? readonly E[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** Any part of a strategy file, as a test writes it (before the schema's defaults). */
export type StrategyOverride = DeepPartial<z.input<typeof StrategyFile>>;

/** The bases a test starts from. */
const BASES = {
  /** The schema's defaults: what a strategy file holding only `format` means. */
  schema: {},
  /** For backtests: opens anything at a fixed size, no budget ever binds, every pull sold back. */
  backtest: {
    name: 'test',
    open: { min_ev_ratio: 0, sizing: 'fixed' },
    budget: { max_daily_spend_usd: 1e9, max_total_spend_usd: 1e9, min_balance_usd: 0, stop_loss_usd: 1e9 },
    sell: { threshold_usd: 1e9 },
  },
  /**
   * For the runner's test world (test/bot/helpers.ts): standard pokemon packs, 3 at a time from
   * break-even, generous budgets; the low band (5-9 USD) sold back, the high band (30-60) listed.
   */
  bot: {
    name: 'test',
    packs: { categories: ['pokemon'], risk_levels: ['standard'] },
    open: { min_ev_ratio: 1, max_quantity: 3, sizing: 'fixed' },
    budget: {
      max_daily_spend_usd: 100_000,
      max_total_spend_usd: 1_000_000,
      min_balance_usd: 0,
      stop_loss_usd: 1_000_000,
    },
    sell: { threshold_usd: 25, list: { markup: 1.2, seller_fee_rate: 0.05, only_when_better: false } },
  },
} satisfies Record<string, StrategyOverride>;

type StrategyBase = keyof typeof BASES;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepMerge(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

/**
 * A strategy: `over` deep-merged over `base` (a named base, default the schema's defaults, or a
 * whole strategy file such as a shipped one), validated by StrategyFile.
 */
export function strategy(
  over: StrategyOverride = {},
  opts: { base?: StrategyBase | StrategyOverride } = {},
): Strategy {
  const base = typeof opts.base === 'string' ? BASES[opts.base] : (opts.base ?? BASES.schema);
  return StrategyFile.parse(deepMerge({ format: STRATEGY_FORMAT, ...base }, over));
}
