/**
 * The strategy file, format `packbot.strategy/v1`. Field names under `packs`, `open`, `budget` and
 * `sell` are the contract with users (issue #4); every field has a default, so `format` alone is a
 * valid strategy. Objects are strict: a misspelt field is an error, not a silently ignored setting.
 */
import { z } from 'zod';
import { CATEGORIES, RISK_LEVELS } from '../api/schemas.js';

export const STRATEGY_FORMAT = 'packbot.strategy/v1';

const Usd = z.number().finite().nonnegative();
const Ratio = z.number().finite().min(0).max(1);

const LogisticFill = z.strictObject({
  model: z.literal('logistic'),
  midpoint: z
    .number()
    .positive()
    .default(1.5)
    .describe('price / market value at which the fill probability is half of max_fill'),
  steepness: z
    .number()
    .positive()
    .default(6)
    .describe('how fast the fill probability falls as the price rises'),
  max_fill: Ratio.default(0.9).describe('fill probability of a very cheap listing within max_days'),
});

const PiecewiseFill = z.strictObject({
  model: z.literal('piecewise'),
  points: z
    .array(z.tuple([z.number().positive(), Ratio]))
    .min(1)
    .describe('[price / market value, fill probability] points, linearly interpolated, flat outside')
    .refine((ps) => ps.every((p, i) => i === 0 || p[0] > ps[i - 1]![0]), {
      message: 'points must be sorted by strictly increasing price ratio',
    }),
});

/**
 * Buyers arrive at a rate that falls exponentially with the price ratio; the listing fills within
 * `max_days` with probability 1 − exp(−rate · max_days). This is the simulator's own model.
 */
const HazardFill = z.strictObject({
  model: z.literal('hazard'),
  fills_per_day_at_value: z
    .number()
    .nonnegative()
    .default(1)
    .describe('expected buyers per day for a listing priced at market value'),
  price_sensitivity: z
    .number()
    .nonnegative()
    .default(4)
    .describe('rate = fills_per_day_at_value x exp(-price_sensitivity x (price / value - 1))'),
});

export const FillModel = z
  .discriminatedUnion('model', [HazardFill, LogisticFill, PiecewiseFill])
  .describe('probability that a listing sells within max_days, as a function of price / market value');
export type FillModel = z.output<typeof FillModel>;

/**
 * How card values move while a card is listed (the simulator's value index: log-normal steps on
 * its hourly tick). The scorer needs it because the sell-back deadline depends on which side of
 * the locked value the market is: a listing above it stays up until the lock ends.
 */
const ValueDrift = z.strictObject({
  daily_volatility: z
    .number()
    .finite()
    .nonnegative()
    .max(1)
    .default(0.02)
    .describe('standard deviation of the daily log change of a card value'),
  daily_trend: z.number().finite().min(-1).max(1).default(0).describe('expected daily change of card values'),
});

/** A wanted card: by id, or by name (case-insensitive substring) with optional grading filters. */
export const WatchEntry = z
  .strictObject({
    card_id: z.string().min(1).optional(),
    name: z.string().min(1).optional().describe('case-insensitive part of the card name'),
    grading_company: z.string().min(1).optional().describe('e.g. PSA; case-insensitive'),
    min_grade: z.number().finite().optional().describe('lowest grading_rank accepted'),
    max_price_usd: Usd.describe('buy whenever the shop price is at or under this, whatever the edge'),
  })
  .refine((w) => (w.card_id === undefined) !== (w.name === undefined), {
    message: 'give exactly one of card_id or name',
  });
export type WatchEntry = z.output<typeof WatchEntry>;

/** Buying shop cards (`POST /cards/purchase`): off unless enabled. */
const CardsSpec = z.strictObject({
  enabled: z.boolean().default(false),
  categories: z.array(z.enum(CATEGORIES)).min(1).default(['pokemon']),
  min_edge_ratio: z
    .number()
    .finite()
    .min(1)
    .default(1.1)
    .describe('buy when the expected realizable value / (price + fee) reaches this'),
  max_price_usd: Usd.default(500).describe('never pay more for one card (watchlist entries excepted)'),
  max_per_day: z
    .number()
    .int()
    .nonnegative()
    .default(5)
    .describe('cards bought per UTC day, watchlist included'),
  max_daily_spend_usd: Usd.default(500).describe('card prices plus fees per UTC day'),
  exit: z
    .enum(['list', 'hold', 'sell_back'])
    .default('list')
    .describe('list: as a pull at or above the threshold; hold: keep at market value; sell_back: at once'),
  watchlist: z.array(WatchEntry).default([]),
});
/** @public vocabulary of the strategy file format; nothing imports it yet */
export type CardsSpec = z.output<typeof CardsSpec>;

export const StrategyFile = z.strictObject({
  format: z.literal(STRATEGY_FORMAT),
  name: z.string().min(1).default('unnamed'),
  description: z.string().default(''),
  packs: z
    .strictObject({
      categories: z.array(z.enum(CATEGORIES)).min(1).default(['pokemon']),
      include: z.array(z.string().min(1)).default([]).describe('pack_types to consider; empty = all'),
      exclude: z.array(z.string().min(1)).default([]),
      risk_levels: z
        .array(z.enum(RISK_LEVELS))
        .min(1)
        .default([...RISK_LEVELS]),
    })
    .prefault({}),
  open: z
    .strictObject({
      min_ev_ratio: z
        .number()
        .nonnegative()
        .default(1.0)
        .describe('open only when realized_ev / price reaches this'),
      max_quantity: z.number().int().min(1).max(10).default(10),
      sizing: z
        .enum(['kelly', 'fixed'])
        .default('kelly')
        .describe('kelly: size by growth of the balance (never opens a negative edge); fixed: max_quantity'),
      kelly_fraction: z
        .number()
        .positive()
        .max(1)
        .default(0.5)
        .describe('fraction of the Kelly quantity to open per request'),
      allow_estimated: z
        .boolean()
        .default(true)
        .describe('open truncated pools (decided on the lower bound of their value)'),
      max_ev_gap_ratio: z
        .number()
        .finite()
        .nonnegative()
        .default(0.5)
        .describe(
          "never open a pool whose expected_value is further from its cards' EV than this share of the larger (and 1 USD)",
        ),
      cooldown_seconds: z
        .number()
        .int()
        .nonnegative()
        .default(0)
        .describe("extra wait after each purchase on top of the server's limit"),
    })
    .prefault({}),
  budget: z
    .strictObject({
      max_daily_spend_usd: Usd.default(500),
      max_total_spend_usd: Usd.default(5000),
      min_balance_usd: Usd.default(100).describe('never spend below this reserve'),
      stop_loss_usd: Usd.default(1000).describe(
        'stop opening once the marked loss (cards at sell-back value, sealed packs at sealed_value_fraction) reaches this',
      ),
      kill_switch: z.boolean().default(false).describe('true: never open anything'),
    })
    .prefault({}),
  sell: z
    .strictObject({
      threshold_usd: Usd.default(50).describe('below: sell back in the 0.9 window; at or above: list'),
      sealed_value_fraction: Ratio.default(0.5).describe(
        'what a sealed pack (not sellable back) is worth to us, as a fraction of its value',
      ),
      list: z
        .strictObject({
          markup: z.number().min(1).max(2).default(1.5).describe('listing price = markup x market value'),
          max_days: z.number().positive().max(30).default(3).describe('then delist and sell back'),
          min_price_usd: Usd.default(1).describe('marketplace minimum: a listing price must be above it'),
          seller_fee_rate: Ratio.default(0).describe('share of the sale price kept by the marketplace'),
          only_when_better: z
            .boolean()
            .default(true)
            .describe('sell back instead when the listing is expected to pay less than selling back now'),
          reprice_every_hours: z
            .number()
            .positive()
            .default(24)
            .describe('lower the markup by markup_step this often'),
          markup_step: z.number().nonnegative().default(0.1),
          min_markup: z.number().min(1).max(2).default(1.05).describe('repricing never goes below this'),
          // 5%: each reprice is a delisting and a new listing (two writes, and the listing may
          // lose its place). At the shipped 2% daily volatility a 1% band is one standard
          // deviation of six hours' moves, so most listings were repriced several times a day;
          // 5% is one of about six days', a listing's whole life, while the price stays within
          // 5% of its plan (a shift of the fill rate the markup steps dwarf).
          reprice_band: Ratio.default(0.05).describe(
            'reprice only when the target price moves more than this share of the listed price away from it (a markup step always reprices)',
          ),
          lock_margin_minutes: z
            .number()
            .nonnegative()
            .default(60)
            .describe('sell this long before the value lock ends when the market fell'),
          fill: FillModel.prefault({ model: 'hazard' }),
          value_drift: ValueDrift.prefault({}),
        })
        .prefault({}),
    })
    .prefault({}),
  cards: CardsSpec.prefault({}),
});

export type Strategy = z.output<typeof StrategyFile>;

/** A strategy with every default applied (what an empty strategy file means). */
export function defaultStrategy(): Strategy {
  return StrategyFile.parse({ format: STRATEGY_FORMAT });
}
