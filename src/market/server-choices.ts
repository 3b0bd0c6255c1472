/**
 * The simulator's choices where the spec says "not shown" or says nothing: how answers are
 * written (timestamps, unknown fields, key order, the card object's optional fields), what the
 * vault shows, how a bought card is named for sell-back, when listing proceeds arrive, how long an
 * order takes to answer, and which statuses and codes some errors carry. Each one is a field of the
 * world's `rules` whose default is what the simulator always did, so the bot can be run against
 * several legal servers (config/worlds/alt-*.yaml) instead of one. docs/simulator.md has a row for
 * each, quoting the spec line it fills in.
 */
import { z } from 'zod';

const Ms = z.number().int().min(0).max(600_000);

export const SERVER_CHOICES = {
  listing_proceeds_delay_seconds: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe(
      "seconds between a listing's sale and its proceeds reaching the seller's balance; the card leaves the vault at the sale",
    ),
  purchased_card_pull_id: z
    .enum(['transaction_id', 'checkout_id', 'opaque'])
    .default('transaction_id')
    .describe(
      "the pull_id a card bought by card purchase has in the vault and in sell-back: the purchase's transaction_id, its checkout_id, or a fresh id shown only by the vault",
    ),
  purchased_card_pulled_at: z
    .enum(['null', 'purchase_time'])
    .default('null')
    .describe("a bought card's pulled_at in the vault: null (it was not pulled) or the purchase time"),
  vault_sealed_packs: z
    .boolean()
    .default(false)
    .describe(
      'sealed packs from consolation pulls appear in the vault (buyback null; they cannot be sold back or listed)',
    ),
  vault_order: z
    .enum(['acquired', 'newest_first', 'card_id', 'value_desc'])
    .default('acquired')
    .describe('order of the vault pages'),
  shop_sale_status: z.string().min(1).default('shop').describe('sale_status of shop stock'),
  pool_total_cards: z
    .enum(['listed', 'all_bands', 'listed_and_chase'])
    .default('listed')
    .describe(
      "a pool's total_cards: the cards listed in `cards`, every card of the pack's bands at any risk level, or the listed ones plus an active chase",
    ),
  chase_bucket: z.string().min(1).default('chase').describe("rarity_tier and bucket of a chase pull's hit"),
  card_fields: z
    .enum(['full', 'nulls', 'omitted'])
    .default('full')
    .describe(
      "the card object's optional fields (grading, cert number, back and render images, slab label): all given, null, or left out",
    ),
  extra_fields: z
    .boolean()
    .default(false)
    .describe('every JSON object of every answer (errors too) carries fields the spec does not list'),
  key_order: z
    .enum(['as_built', 'sorted', 'reversed', 'shuffled'])
    .default('as_built')
    .describe("order of the keys of every answer's JSON objects (shuffled: fixed per object shape and seed)"),
  timestamp_fraction_digits: z
    .number()
    .int()
    .min(0)
    .max(9)
    .default(3)
    .describe(
      "digits after the seconds in every timestamp the service writes; below 3 the service's clock itself has that resolution",
    ),
  timestamp_zone: z.enum(['Z', '+00:00']).default('Z').describe('how timestamps say UTC'),
  purchase_report_rows: z
    .enum(['per_pack', 'per_order'])
    .default('per_pack')
    .describe(
      "the purchase report's rows of a pack order: one per pack at its price, or one per order at its total",
    ),
  pack_purchase_answer_ms: Ms.default(0).describe(
    'how long a pack purchase takes before it commits and answers; the order is running meanwhile (409 IDEMPOTENCY_IN_PROGRESS)',
  ),
  card_purchase_answer_ms: Ms.default(0).describe('the same for a card purchase'),
  auth_error_codes: z
    .enum(['none', 'generic', 'specific'])
    .default('none')
    .describe(
      'codes of 401 and 403 bodies: none, UNAUTHORIZED/FORBIDDEN, or one per cause (INVALID_API_KEY, API_KEY_DISABLED, MISSING_SCOPE, ACCOUNT_NOT_LINKED)',
    ),
  holdings_errors: z
    .enum(['mixed', 'bad_request', 'rest'])
    .default('mixed')
    .describe(
      'request-level errors of sell-back, list and delist: mixed (card not held 404, the rest 400), bad_request (all 400), rest (not held 404, already listed or not listed 409, price out of range and invalid bodies 422)',
    ),
} as const;

/**
 * Every rule that fills in what the spec leaves open: the ones above, and the limits and the
 * marketplace's numbers the spec names without a value. docs/simulator.md has a row for each; the
 * alternative worlds (config/worlds/alt-*.yaml) set every one of them otherwise.
 */
export const SILENT_SPEC_RULES = [
  'seller_fee_rate',
  'marketplace_min_price',
  'card_daily_count_cap',
  'card_daily_spend_cap',
  'card_purchase_speed_limited',
  ...(Object.keys(SERVER_CHOICES) as (keyof typeof SERVER_CHOICES)[]),
] as const;
