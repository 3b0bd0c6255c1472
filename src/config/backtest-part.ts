/**
 * A shard's output, format `packbot.backtest-part/v1` (`packbot backtest --shard K/N --json F`):
 * the run's identity (what every shard of one run shares), the report's context and the shard's
 * per-path arrays. `packbot merge` checks the parts belong together and builds from them the very
 * report the unsharded run prints.
 */
import { z } from 'zod';

export const BACKTEST_PART_FORMAT = 'packbot.backtest-part/v1';

const Count = z.number().int().nonnegative();
const Numbers = z.array(z.number());

export const BacktestPartFile = z.strictObject({
  format: z.literal(BACKTEST_PART_FORMAT),
  shard: z
    .strictObject({ index: z.number().int().min(1), count: z.number().int().min(1) })
    .refine((s) => s.index <= s.count, { message: 'index must be between 1 and count' })
    .describe('this part is shard index of count: the paths i with i % count = index - 1'),
  run: z
    .strictObject({
      paths: Count.describe('paths of the whole run (all shards)'),
      days: z.number().int().min(1),
      seed: Count,
      market: z.enum(['static', 'dynamic']),
      snapshot_sha256: z.string().regex(/^[0-9a-f]{64}$/),
      strategy_sha256: z.string().regex(/^[0-9a-f]{64}$/),
      settings_sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .describe('starting balance and dynamics overrides'),
      strategy_label: z.string(),
      snapshot_label: z.string(),
    })
    .describe('what every shard of one run shares'),
  context: z
    .strictObject({
      days: z.number().int().min(1),
      seed: Count,
      market: z.enum(['static', 'dynamic']),
      strategyName: z.string(),
      strategyDigest: z.string().regex(/^[0-9a-f]{64}$/),
      takenAt: z.string(),
      startBalanceCents: z.number(),
      limits: z.strictObject({
        max_packs_per_day: z.number(),
        min_seconds_between_purchases: z.number(),
        packs_left_first_day: z.number(),
      }),
      pools: z.array(
        z.strictObject({
          category: z.string(),
          packType: z.string(),
          risk: z.string(),
          priceCents: z.number(),
          ev: z.number().nullable(),
          realizedEv: z.number().nullable(),
          decision: z.string(),
        }),
      ),
      cards: z
        .strictObject({
          backtested: z.boolean(),
          notice: z.string().nullable(),
          categories: z.array(z.string()),
        })
        .optional()
        .describe('present when the strategy buys shop cards'),
    })
    .describe("the report's context: the scorer's rows on the snapshot, limits, start balance"),
  raw: z
    .strictObject({
      paths: z.array(Count).describe('path indexes, increasing'),
      totals: Numbers.describe(
        '8 per path: packs, spend, payout, listing, holdings, net, max drawdown, ruined',
      ),
      equity: Numbers.describe('days + 1 per path (cents)'),
      pools: Numbers.describe('pools x 4 per path: packs, spend, value, realized EV at open (cents)'),
      max_daily: Numbers.describe('most packs opened on one UTC day, per path'),
      cards: Numbers.optional().describe(
        'when cards are backtested: 8 per path (bought, spend, fees, sales, sell-backs, holdings, net, most in a day) then 3 per card category (bought, outlay, value), cents',
      ),
      model: Numbers.describe(
        '42 per path: expected vs realized sums of all orders, then of the orders still open at the end (src/backtest/path/path-model.ts; cents, cents squared)',
      ),
      model_pools: Numbers.describe(
        'pools x 7 per path: orders, packs, resolved packs, open pulls, expected, realized, variance',
      ),
    })
    .describe("the shard's per-path results"),
  partial: z.boolean(),
  elapsed_ms: z.number().nonnegative(),
});

export type BacktestPartFile = z.output<typeof BacktestPartFile>;
