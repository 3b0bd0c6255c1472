/**
 * The wire contract of the Partner Trading API (../shared/spec/partner-api.md), as zod schemas.
 * Response objects are `looseObject`: fields the spec does not list are tolerated and kept. Request
 * objects are strict: a field the spec does not list is our mistake, refused before it is sent.
 * Amounts stay USD numbers here (the wire format); code converts them to cents with `toCents`
 * where it uses them.
 */

import { z } from 'zod';
import {
  IDEMPOTENCY_KEY_RE,
  MAX_PACKS_PER_REQUEST,
  MAX_SELLBACK_ITEMS,
  MIN_PACKS_PER_REQUEST,
  PAGE_LIMITS,
  REPORT_MAX_WINDOW_MS,
} from './rules.js';

export const CATEGORIES = ['pokemon', 'onepiece', 'sports', 'riftbound', 'watches'] as const;
export const RISK_LEVELS = ['chill', 'standard', 'aggressive'] as const;
export const REPORT_SOURCES = [
  'pokemon',
  'onepiece',
  'sports',
  'riftbound',
  'custom',
  'loose',
  'named',
] as const;
export const SCOPES = [
  'read:catalog',
  'read:account',
  'read:pulls',
  'rip:packs',
  'buy:cards',
  'sell:cards',
  'write:listings',
] as const;

export const Category = z.enum(CATEGORIES);
export type Category = z.infer<typeof Category>;
export const RiskLevel = z.enum(RISK_LEVELS);
export type RiskLevel = z.infer<typeof RiskLevel>;
export type Scope = (typeof SCOPES)[number];

export const Timestamp = z.iso.datetime({ offset: true });
const Usd = z.number().finite();
const NonNegUsd = Usd.nonnegative();
const Probability = z.number().min(0).max(1);
const Count = z.number().int().nonnegative();
const Id = z.string().min(1);
const optStr = z.string().nullish();

// ---------- resources ----------

export const Card = z.looseObject({
  id: Id,
  category: z.string().nullish(),
  name: z.string(),
  set: optStr,
  grading_company: optStr,
  grading_rank: z.number().nullish(),
  cert_number: optStr,
  market_value: NonNegUsd,
  front_image: optStr,
  back_image: optStr,
  render_image: optStr,
  image_url: optStr,
  slab_label: optStr,
  price: NonNegUsd.optional(),
  sale_status: optStr,
});
export type Card = z.infer<typeof Card>;

export const ShopCard = Card.extend({ price: NonNegUsd, sale_status: z.string() });
export type ShopCard = z.infer<typeof ShopCard>;

export const PoolCard = Card.extend({ bucket_id: Id });
export type PoolCard = z.infer<typeof PoolCard>;

export const SealedPack = z.looseObject({
  id: Id,
  name: z.string(),
  set: optStr,
  category: z.string().nullish(),
  image_url: optStr,
});
export type SealedPack = z.infer<typeof SealedPack>;

export const Pack = z.looseObject({
  pack_type: Id,
  name: z.string(),
  price: NonNegUsd,
  available: z.boolean(),
  reason: z.string().nullish(),
  max_quantity: z.number().int().min(1),
  risk_levels: z.array(RiskLevel),
});
export type Pack = z.infer<typeof Pack>;

export const Band = z.looseObject({
  bucket_id: Id,
  label: z.string(),
  min_value: NonNegUsd,
  max_value: NonNegUsd,
  odds: Probability,
  is_consolation: z.boolean(),
  hittable_cards: Count,
});
export type Band = z.infer<typeof Band>;

const Chase = z.looseObject({
  card: Card,
  probability: Probability,
  odds_label: z.string(),
  label: z.string(),
  ends_at: Timestamp.nullable(),
});
/** @public vocabulary of the Partner API's wire format; nothing imports it yet */
export type Chase = z.infer<typeof Chase>;

const BuybackAfter = z.looseObject({
  amount: NonNegUsd,
  rate: Probability,
  valid_until: Timestamp,
});
export const PullBuyback = z.looseObject({
  amount: NonNegUsd,
  rate: Probability,
  valid_until: Timestamp,
  after: BuybackAfter,
});
export type PullBuyback = z.infer<typeof PullBuyback>;

const PullHit = z.looseObject({
  rarity_tier: z.string(),
  bucket: z.string(),
  bucket_odds: Probability,
  is_chase: z.boolean(),
  chase_label: z.string().nullable(),
});

const CardPull = z.looseObject({
  pull_id: Id,
  kind: z.literal('card'),
  item: Card,
  value: NonNegUsd,
  hit: PullHit,
  buyback: PullBuyback.nullable(),
});
const SealedPull = z.looseObject({
  pull_id: Id,
  kind: z.literal('sealed_pack'),
  item: SealedPack,
  value: NonNegUsd,
  hit: PullHit,
  buyback: z.null(),
});
export const Pull = z.discriminatedUnion('kind', [CardPull, SealedPull]);
export type Pull = z.infer<typeof Pull>;
/** @public vocabulary of the Partner API's wire format; nothing imports it yet */
export type CardPull = z.infer<typeof CardPull>;

const VaultBuyback = z.looseObject({
  amount: NonNegUsd,
  rate: Probability,
  basis_value: NonNegUsd,
  locked_value_until: Timestamp.nullable(),
});
/** @public vocabulary of the Partner API's wire format; nothing imports it yet */
export type VaultBuyback = z.infer<typeof VaultBuyback>;

export const VaultEntry = z.looseObject({
  card_id: Id,
  pull_id: z.string().nullable(),
  pulled_at: Timestamp.nullable(),
  item: Card,
  value: NonNegUsd,
  listed: z.boolean(),
  buyback: VaultBuyback.nullable(),
});
export type VaultEntry = z.infer<typeof VaultEntry>;

const Limits = z.looseObject({
  packs_today: Count,
  max_packs_per_day: Count,
  packs_left_today: Count,
  resets_at: Timestamp,
  min_seconds_between_purchases: Count,
  next_purchase_at: Timestamp,
});
/** @public vocabulary of the Partner API's wire format; nothing imports it yet */
export type Limits = z.infer<typeof Limits>;

export const Account = z.looseObject({
  username: z.string(),
  balance: Usd,
  limits: Limits,
});
export type Account = z.infer<typeof Account>;

export const Identity = z.looseObject({
  key: z.looseObject({ name: z.string(), scopes: z.array(z.string()) }),
  linked: z.boolean(),
  account: z.looseObject({ id: Id, username: z.string(), profile_url: z.string() }).nullable(),
});
export type Identity = z.infer<typeof Identity>;

export const PurchaseReportRow = z.looseObject({
  user_id: Id,
  created_at: Timestamp,
  amount: NonNegUsd,
  source: z.string(),
  pack_type: z.string(),
});
export type PurchaseReportRow = z.infer<typeof PurchaseReportRow>;

export const Listing = z.looseObject({ listing_id: Id, card_id: Id, price: NonNegUsd });
export type Listing = z.infer<typeof Listing>;

// ---------- responses ----------

export const PackPurchaseResponse = z.looseObject({
  checkout_id: Id,
  pack_type: z.string(),
  quantity: z.number().int().min(1),
  total_charged: NonNegUsd,
  remaining_balance: Usd,
  summary: z.looseObject({
    total_value: NonNegUsd,
    buyback_now_total: NonNegUsd,
    best_pull: z.looseObject({ pull_id: Id, name: z.string(), value: NonNegUsd }).nullable(),
  }),
  pulls: z.array(Pull),
  idempotent_replay: z.boolean().optional(),
});
export type PackPurchaseResponse = z.infer<typeof PackPurchaseResponse>;

export const CardPurchaseResponse = z.looseObject({
  checkout_id: Id,
  transaction_id: Id,
  card_id: Id,
  source: z.enum(['shop', 'listing']),
  listing_id: z.string().nullable(),
  price: NonNegUsd,
  fee: NonNegUsd,
  total_charged: NonNegUsd,
  remaining_balance: Usd,
  item: Card,
  idempotent_replay: z.boolean().optional(),
  needs_review: z.boolean().optional(),
});
export type CardPurchaseResponse = z.infer<typeof CardPurchaseResponse>;

export const SellBackResult = z.looseObject({
  card_id: z.string(),
  pull_id: z.string(),
  status: z.enum(['sold', 'already_sold', 'failed']),
  transaction_id: z.string().nullish(),
  payout_amount: NonNegUsd.nullish(),
  payout_rate: Probability.nullish(),
  error: z.string().optional(),
});
export type SellBackResult = z.infer<typeof SellBackResult>;

export const SellBackResponse = z.looseObject({
  total_paid: NonNegUsd,
  remaining_balance: Usd,
  results: z.array(SellBackResult),
});
export type SellBackResponse = z.infer<typeof SellBackResponse>;

export const DelistResponse = z.looseObject({ card_id: Id, delisted: z.boolean() });
export type DelistResponse = z.infer<typeof DelistResponse>;

export const PackList = z.looseObject({ category: z.string(), packs: z.array(Pack) });
export type PackList = z.infer<typeof PackList>;

export const PackPool = z.looseObject({
  pack_type: Id,
  name: z.string(),
  category: z.string(),
  risk_level: RiskLevel,
  price: NonNegUsd,
  available: z.boolean(),
  expected_value: NonNegUsd,
  bands: z.array(Band),
  chase: Chase.nullable(),
  total_cards: Count,
  cards: z.array(PoolCard),
});
export type PackPool = z.infer<typeof PackPool>;

const Page = { page: z.number().int().min(1), per_page: z.number().int().min(1), total: Count };

export const ShopCardsPage = z.looseObject({ category: z.string(), ...Page, cards: z.array(ShopCard) });
export type ShopCardsPage = z.infer<typeof ShopCardsPage>;

export const VaultPage = z.looseObject({ category: z.string(), ...Page, cards: z.array(VaultEntry) });
export type VaultPage = z.infer<typeof VaultPage>;

export const PurchaseReportPage = z.looseObject({
  since: Timestamp,
  until: Timestamp,
  ...Page,
  pulls: z.array(PurchaseReportRow),
});
export type PurchaseReportPage = z.infer<typeof PurchaseReportPage>;

/** Error body: `error` always, `code` where a client may branch, extra fields per code. */
export const ErrorBody = z.looseObject({
  error: z.string(),
  code: z.string().optional(),
  card_id: z.string().optional(),
  price: z.number().optional(),
  max_price: z.number().optional(),
  retry_after_seconds: z.number().int().nonnegative().optional(),
  limit: z.number().int().optional(),
  used: z.number().int().optional(),
  resets_at: Timestamp.optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

// ---------- requests ----------

export { IDEMPOTENCY_KEY_RE } from './rules.js';
export const IdempotencyKey = z
  .string()
  .regex(IDEMPOTENCY_KEY_RE, 'must be 8 to 128 characters of A-Za-z0-9_-');

export const PackPurchaseRequest = z.strictObject({
  pack_type: Id,
  category: Category.optional(),
  quantity: z.number().int().min(MIN_PACKS_PER_REQUEST).max(MAX_PACKS_PER_REQUEST).optional(),
  risk_level: RiskLevel.optional(),
});
export type PackPurchaseRequest = z.infer<typeof PackPurchaseRequest>;

export const CardPurchaseRequest = z.strictObject({
  card_id: Id,
  max_price: NonNegUsd,
});
export type CardPurchaseRequest = z.infer<typeof CardPurchaseRequest>;

export const SellBackItem = z.strictObject({ card_id: Id, pull_id: Id });
export type SellBackItem = z.infer<typeof SellBackItem>;
export const SellBackRequest = z.strictObject({
  items: z.array(SellBackItem).min(1).max(MAX_SELLBACK_ITEMS),
});
export type SellBackRequest = z.infer<typeof SellBackRequest>;

export const CreateListingRequest = z.strictObject({ card_id: Id, price: z.number().finite().positive() });
export type CreateListingRequest = z.infer<typeof CreateListingRequest>;
export const DeleteListingRequest = z.strictObject({ card_id: Id });
export type DeleteListingRequest = z.infer<typeof DeleteListingRequest>;

export const PackListQuery = z.strictObject({ category: Category.optional() });
export type PackListQuery = z.infer<typeof PackListQuery>;
export const PackPoolQuery = z.strictObject({
  pack_type: Id,
  category: Category.optional(),
  risk_level: RiskLevel.optional(),
});
export type PackPoolQuery = z.infer<typeof PackPoolQuery>;

const pageOf = (max: number) => z.number().int().min(1).max(max).optional();
export const ShopCardsQuery = z.strictObject({
  category: Category.optional(),
  page: z.number().int().min(1).optional(),
  per_page: pageOf(PAGE_LIMITS.shopCards.max),
});
export type ShopCardsQuery = z.infer<typeof ShopCardsQuery>;
export const VaultQuery = z.strictObject({
  category: Category.optional(),
  page: z.number().int().min(1).optional(),
  per_page: pageOf(PAGE_LIMITS.vault.max),
});
export type VaultQuery = z.infer<typeof VaultQuery>;

export const PurchaseReportQuery = z
  .strictObject({
    since: Timestamp.optional(),
    until: Timestamp.optional(),
    page: z.number().int().min(1).optional(),
    per_page: pageOf(PAGE_LIMITS.purchaseReport.max),
  })
  .superRefine((q, ctx) => {
    if (q.since && q.until) {
      const span = Date.parse(q.until) - Date.parse(q.since);
      if (span < 0)
        ctx.addIssue({ code: 'custom', path: ['since'], message: 'window is inverted (since > until)' });
      else if (span > REPORT_MAX_WINDOW_MS)
        ctx.addIssue({ code: 'custom', path: ['until'], message: 'window is longer than 31 days' });
    }
  });
export type PurchaseReportQuery = z.infer<typeof PurchaseReportQuery>;
