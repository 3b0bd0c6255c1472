/**
 * `packbot.world/v1`: everything the simulated service starts from. Amounts are USD numbers (file
 * boundary); the market converts them to cents. Every field has a default, so a world file only
 * states what it changes. Choices where the spec says "not shown" (or nothing) live under `rules`
 * (the wire and vault ones in server-choices.ts).
 */

import { z } from 'zod';
import {
  CARD_FEE_USD,
  DEFAULT_MAX_PACKS_PER_DAY,
  DEFAULT_MIN_SECONDS_BETWEEN_PURCHASES,
  FRESH_RATE,
  FRESH_WINDOW_MS,
  LATE_RATE,
  MAX_LISTING_MULTIPLE,
  MAX_PACKS_PER_REQUEST,
  MIN_PACKS_PER_REQUEST,
  VALUE_LOCK_DAYS,
} from '../api/rules.js';
import { CATEGORIES, REPORT_SOURCES, RISK_LEVELS, RiskLevel, SCOPES, Timestamp } from '../api/schemas.js';
import { SERVER_CHOICES } from './server-choices.js';

export const WORLD_FORMAT = 'packbot.world/v1';

const Usd = z.number().finite().nonnegative();
const Rate = z.number().finite().nonnegative();
const Prob = z.number().min(0).max(1);
const Int = z.number().int().nonnegative();

export const CardSpec = z.strictObject({
  id: z.string().min(1).optional(),
  name: z.string().min(1),
  set: z.string().optional(),
  value: Usd.describe('market value in USD'),
  grading_company: z.string().optional(),
  grading_rank: z.number().optional(),
  cert_number: z.string().optional(),
  image_url: z.string().optional(),
});
export type CardSpec = z.infer<typeof CardSpec>;

const Distribution = z.enum(['uniform', 'log_uniform']);

/** Cards generated from a seed, values drawn within the band's bounds. */
const GenerateSpec = z.strictObject({
  count: Int,
  distribution: Distribution.default('log_uniform'),
  seed: z.number().int().optional().describe('defaults to a seed derived from the market seed'),
  names: z.array(z.string().min(1)).min(1).optional(),
  set: z.string().optional(),
});

const OddsByRisk = z.strictObject({
  chill: Prob.optional(),
  standard: Prob.optional(),
  aggressive: Prob.optional(),
});

export const BandSpec = z
  .strictObject({
    bucket_id: z.string().min(1),
    label: z.string().optional().describe('defaults to "$min-$max"'),
    rarity_tier: z.string().optional().describe('defaults to bucket_id'),
    min_value: Usd,
    max_value: Usd,
    odds: OddsByRisk.describe('relative odds per risk level; missing or 0 means the band is zeroed there'),
    is_consolation: z.boolean().default(false),
    cards: z.array(CardSpec).default([]),
    generate: GenerateSpec.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.min_value > b.max_value)
      ctx.addIssue({ code: 'custom', path: ['max_value'], message: 'max_value is below min_value' });
    b.cards.forEach((c, i) => {
      if (c.value < b.min_value || c.value > b.max_value)
        ctx.addIssue({
          code: 'custom',
          path: ['cards', i, 'value'],
          message: `value ${c.value} is outside the band [${b.min_value}, ${b.max_value}]`,
        });
    });
  });
export type BandSpec = z.infer<typeof BandSpec>;

const ChaseSpec = z.strictObject({
  card: CardSpec,
  probability: Prob,
  label: z.string().default('Chase'),
  odds_label: z.string().optional().describe('defaults to "1 in N"'),
  ends_at: Timestamp.nullable().default(null),
});

export const PackSpec = z
  .strictObject({
    pack_type: z.string().min(1),
    name: z.string().min(1),
    price: Usd,
    max_quantity: z
      .number()
      .int()
      .min(MIN_PACKS_PER_REQUEST)
      .max(MAX_PACKS_PER_REQUEST)
      .default(MAX_PACKS_PER_REQUEST),
    available: z.boolean().default(true),
    reason: z.string().optional().describe('shown when available is false'),
    purchasable: z.boolean().default(true).describe('false: omitted from the list, 404 on the pool'),
    risk_levels: z
      .array(RiskLevel)
      .min(1)
      .default([...RISK_LEVELS]),
    report_source: z
      .enum(REPORT_SOURCES)
      .optional()
      .describe('purchase report source; defaults to the category'),
    popularity: Rate.default(1).describe("relative weight of this pack in other users' openings"),
    bands: z.array(BandSpec).min(1),
    chase: ChaseSpec.nullable().default(null),
  })
  .superRefine((p, ctx) => {
    const ids = new Set<string>();
    p.bands.forEach((b, i) => {
      if (ids.has(b.bucket_id))
        ctx.addIssue({ code: 'custom', path: ['bands', i, 'bucket_id'], message: 'duplicate bucket_id' });
      ids.add(b.bucket_id);
    });
  });
export type PackSpec = z.infer<typeof PackSpec>;

/** A shop card may carry its own price (a snapshot's recorded shop): it moves with its value. */
const ShopCardSpec = CardSpec.extend({
  price: Usd.optional().describe(
    "its shop price (USD) at this value, moving with the value; default: value x the shop's markup",
  ),
});

const ShopSpec = z.strictObject({
  cards: z.array(ShopCardSpec).default([]),
  generate: GenerateSpec.optional(),
  min_value: Usd.default(5),
  max_value: Usd.default(500),
  markup: z.number().min(0.5).max(5).default(1.15).describe('shop price = market value x markup'),
});

const CategorySpec = z.strictObject({
  packs: z.array(PackSpec).default([]),
  shop: ShopSpec.prefault({}),
});
/** @public vocabulary of the world file format; nothing imports it yet */
export type CategorySpec = z.infer<typeof CategorySpec>;

const KeySpec = z.strictObject({
  name: z.string().min(1),
  key: z.string().min(1),
  scopes: z.array(z.enum(SCOPES)).default([]),
  account: z.string().nullable().default(null).describe('linked account id, or null for an unlinked key'),
  disabled: z.boolean().default(false),
  max_packs_per_day: Int.optional(),
  min_seconds_between_purchases: Int.optional(),
});

const AccountSpec = z.strictObject({
  id: z.string().min(1),
  username: z.string().min(1),
  balance: Usd.default(0),
  internal: z.boolean().default(false).describe('internal accounts are left out of the purchase report'),
});

export const DynamicsSpec = z.strictObject({
  others_pack_openings_per_hour: Rate.default(30),
  others_free_opening_fraction: Prob.default(0.05),
  others_internal_fraction: Prob.default(0.02),
  other_users: z.number().int().min(1).default(300),
  others_shop_purchases_per_hour: Rate.default(3),
  restock_cards_per_hour_per_pack: Rate.default(3).describe(
    'random arrivals into bands below their initial size',
  ),
  restock_fraction_per_hour: Rate.default(0.3).describe(
    'share of a band gap (to its initial size) refilled per hour',
  ),
  shop_restock_fraction_per_hour: Rate.default(0.2),
  tick_seconds: z.number().int().min(60).default(3600).describe('step of value drift and listing fills'),
  value_daily_volatility: Rate.default(0.02),
  value_daily_trend: z.number().finite().default(0),
  listing_fills_per_day_at_value: Rate.default(1),
  listing_price_sensitivity: Rate.default(4),
  others_listings_per_category: Int.default(5),
  others_listing_markup: z.number().min(0.5).max(2).default(1.2),
});

export const RulesSpec = z.strictObject({
  fresh_rate: Prob.default(FRESH_RATE),
  fresh_window_seconds: Int.default(FRESH_WINDOW_MS / 1000),
  locked_rate: Prob.default(LATE_RATE),
  lock_days: Int.default(VALUE_LOCK_DAYS),
  market_rate: Prob.default(LATE_RATE),
  purchased_card_rate: Prob.default(LATE_RATE).describe('sell-back rate of cards bought with card purchase'),
  max_packs_per_day: Int.default(DEFAULT_MAX_PACKS_PER_DAY),
  min_seconds_between_purchases: Int.default(DEFAULT_MIN_SECONDS_BETWEEN_PURCHASES),
  card_fee: Usd.default(CARD_FEE_USD),
  card_daily_count_cap: Int.default(20),
  card_daily_spend_cap: Usd.default(5000).describe('card prices (fee excluded) per account per UTC day'),
  card_purchase_speed_limited: z.boolean().default(false),
  marketplace_min_price: Usd.default(1).describe('listing price must be strictly above this'),
  max_listing_multiple: z.number().min(1).default(MAX_LISTING_MULTIPLE),
  seller_fee_rate: Prob.default(0.05),
  max_body_bytes: z.number().int().min(256).default(65536),
  ...SERVER_CHOICES,
});
export type Rules = z.infer<typeof RulesSpec>;
export type Dynamics = z.infer<typeof DynamicsSpec>;

export const WorldFile = z
  .strictObject({
    $schema: z.string().optional(),
    format: z.literal(WORLD_FORMAT),
    extends: z
      .string()
      .min(1)
      .optional()
      .describe(
        'a world file this one changes (path relative to this file, or "default" for config/sim.yaml): dynamics and rules merge field by field, other sections given here replace the base\'s',
      ),
    name: z.string().default('world'),
    seed: z.number().int().optional().describe('card generation seed; defaults to the market seed'),
    accounts: z.array(AccountSpec).default([]),
    keys: z.array(KeySpec).default([]),
    categories: z
      .strictObject(
        Object.fromEntries(CATEGORIES.map((c) => [c, CategorySpec.optional()])) as {
          [K in (typeof CATEGORIES)[number]]: z.ZodOptional<typeof CategorySpec>;
        },
      )
      .prefault({}),
    dynamics: DynamicsSpec.prefault({}),
    rules: RulesSpec.prefault({}),
  })
  .superRefine((w, ctx) => {
    const accounts = new Set(w.accounts.map((a) => a.id));
    if (accounts.size !== w.accounts.length)
      ctx.addIssue({ code: 'custom', path: ['accounts'], message: 'duplicate account id' });
    const keys = new Set<string>();
    w.keys.forEach((k, i) => {
      if (keys.has(k.key))
        ctx.addIssue({ code: 'custom', path: ['keys', i, 'key'], message: 'duplicate key' });
      keys.add(k.key);
      if (k.account !== null && !accounts.has(k.account))
        ctx.addIssue({ code: 'custom', path: ['keys', i, 'account'], message: `no account '${k.account}'` });
    });
    for (const c of CATEGORIES) {
      const packs = w.categories[c]?.packs ?? [];
      const seen = new Set<string>();
      packs.forEach((p, i) => {
        if (seen.has(p.pack_type))
          ctx.addIssue({
            code: 'custom',
            path: ['categories', c, 'packs', i, 'pack_type'],
            message: 'duplicate pack_type in this category',
          });
        seen.add(p.pack_type);
      });
    }
  });
export type World = z.infer<typeof WorldFile>;
export type WorldInput = z.input<typeof WorldFile>;
