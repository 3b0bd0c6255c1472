/**
 * The answers of the bot's HTTP server (`/api/v1/…` and the operations routes), as zod schemas:
 * the one definition the route table (`routes.ts`), the bot's implementation, the operator commands,
 * the JSON Schemas in `schemas/api-*.schema.json` and `schemas/openapi.json` share (docs/api.md).
 * Money is USD (numbers, two decimals), times are ISO 8601 UTC strings.
 */
import { z } from 'zod';

const Usd = z.number().describe('US dollars');
const Time = z.string().describe('ISO 8601 UTC time');

export const PauseInfo = z.strictObject({
  paused: z.boolean().describe('opening packs is paused (selling and listings go on)'),
  reasons: z.array(z.string()).describe('`file` (kill switch file exists) and/or `endpoint` (control API)'),
  file: z.string().nullable().describe('the kill switch file watched'),
  paused_at: Time.nullable().describe('when the endpoint pause was set'),
  by: z.string().nullable().describe('who set the endpoint pause (token name)'),
  note: z.string().nullable().describe('why (the request reason)'),
});
export type PauseInfo = z.infer<typeof PauseInfo>;

export const AccountStatus = z.strictObject({
  name: z.string(),
  strategy: z.string(),
  balance_usd: Usd.nullable().describe('the last balance the service reported'),
  balance_at: Time.nullable(),
  net_pnl_usd: Usd.describe(
    'payouts + proceeds + holdings at what selling them back now would pay − spend (packbot report)',
  ),
  marked_pnl_usd: Usd.describe(
    "what the stop-loss reads: payouts + proceeds + holdings at their late sell-back value (sealed packs at the strategy's worth) − spend",
  ),
  cash_pnl_usd: Usd.describe('cash only: payouts + listing proceeds − spend'),
  books: z
    .strictObject({
      balance_change_usd: Usd.describe(
        'the balance since the first reading (and the flows booked since the last)',
      ),
      cash_pnl_usd: Usd.describe('payouts + listing proceeds − charges since the first reading'),
      adjustments_usd: Usd.describe('the balance changes the books could not attribute'),
      residual_usd: Usd.describe(
        'balance change − adjustments − cash P&L: 0 when the books explain the balance',
      ),
      sales_awaiting_credit: z
        .number()
        .int()
        .describe('listing sales found whose credit no reading has shown yet'),
      listing_fee_rate: z
        .number()
        .nullable()
        .describe(
          'share of sale prices the marketplace kept over the credited sales (null before the first)',
        ),
      adjustments: z
        .array(z.strictObject({ at: Time, amount_usd: Usd, reason: z.string(), source: z.string() }))
        .describe('the latest 20 adjustment rows, newest last (packbot report lists them all)'),
    })
    .nullable()
    .describe('the books against the balance (docs/ledger.md); null before the first balance reading'),
  packs: z.strictObject({
    today: z.number().int().describe('packs the ledger booked since UTC midnight'),
    left_today: z.number().int().nullable().describe('the service says (last account read)'),
    max_per_day: z.number().int().nullable().describe("the service's daily ceiling"),
    resets_at: Time.nullable(),
  }),
  spend: z.strictObject({
    today_usd: Usd,
    daily_cap_usd: Usd.describe('strategy budget.max_daily_spend_usd'),
    total_usd: Usd,
    total_cap_usd: Usd.describe('strategy budget.max_total_spend_usd'),
    min_balance_usd: Usd.describe('strategy budget.min_balance_usd'),
    stop_loss_usd: Usd.describe('strategy budget.stop_loss_usd'),
  }),
  next_purchase_at: Time.nullable().describe('earliest next purchase the service allows'),
  waiting: z.string().nullable().describe('why the open loop last waited'),
  pauses: z
    .array(z.strictObject({ reason: z.string(), detail: z.string() }))
    .describe(
      'what stops this account opening now: kill_switch, stop_loss, strategy_kill_switch, order_in_doubt',
    ),
  orders_in_doubt: z.number().int(),
  listings_active: z.number().int(),
  holdings: z.number().int().describe('cards and sealed packs still ours'),
  cards: z
    .strictObject({
      today: z.number().int().describe('cards the ledger booked since UTC midnight'),
      max_per_day: z.number().int().describe('strategy cards.max_per_day'),
      spent_today_usd: Usd.describe('card prices + fees since UTC midnight'),
      daily_cap_usd: Usd.describe('strategy cards.max_daily_spend_usd'),
      needing_review: z.number().int().describe('bought cards flagged needs_review, still held'),
      shop_synced_at: Time.nullable().describe('the last full shop sync (null: none in this process)'),
      to_buy: z.number().int().nullable().describe('cards the last sync scored worth buying'),
      waiting: z.string().nullable().describe('why the card loop last waited'),
    })
    .nullable()
    .describe('card buying (strategy cards section); null when the strategy does not buy cards'),
});
export type AccountStatus = z.infer<typeof AccountStatus>;

export const StatusResponse = z.strictObject({
  now: Time,
  mode: z.enum(['live', 'dry-run']),
  embedded: z.boolean(),
  pause: PauseInfo,
  accounts: z.array(AccountStatus),
});
export type StatusResponse = z.infer<typeof StatusResponse>;

const PnlPoint = z.strictObject({
  at: Time,
  balance_usd: Usd.nullable().describe('the last reported balance at that time'),
  cash_pnl_usd: Usd.describe('cash P&L up to that time: payouts + listing proceeds − spend'),
});
const Gap = z.strictObject({
  packs: z.number().int().describe('packs compared (listing: cards listed, one per pack)'),
  pulls: z.number().int().describe('pulls that went this way'),
  expected_net_usd: Usd.describe("the scorer's promise, at the row each order was opened on"),
  realized_net_usd: Usd.describe('what the pulls realized; open pulls marked by the model'),
  gap_usd: Usd.describe('realized − expected'),
  se_usd: Usd.describe("the gap's standard error, from the recorded per-pack spreads"),
  z: z.number().nullable().describe('gap / se; null while there is no spread'),
});
const ModelFigures = Gap.extend({
  orders: z.number().int(),
  resolved_packs: z.number().int().describe("packs whose pull's outcome is in"),
  open_pulls: z.number().int(),
  parts: z.strictObject({ sell_back: Gap, listing: Gap, held: Gap }),
});
/** Expected vs realized (docs/model-drift.md), the same block as `packbot report --json`'s `model`. */
const ModelBlock = ModelFigures.extend({
  marking: z.literal('model').describe('open pulls at what the model expects of them given their age'),
  listing_fee: z
    .strictObject({
      sales: z.number().int().describe('listing sales whose credit a balance reading showed'),
      measured_rate: z.number().nullable().describe('share of their prices the marketplace kept'),
      assumed_rates: z.array(z.number()).describe("the strategies' sell.list.seller_fee_rate"),
    })
    .optional()
    .describe('the marketplace fee behind the listing part (the bot only; docs/model-drift.md)'),
  excluded_orders: z
    .number()
    .int()
    .describe('orders left out (a pull shipped or gone, pulls missing, an unreadable strategy)'),
  at_sell_back: ModelFigures.describe('the same with open pulls at their sell-back offer (a floor)'),
  resolved: ModelFigures.describe(
    'only the orders whose every pull is resolved (leans to the quick ones while orders are open)',
  ),
  by_pack: z.array(
    Gap.extend({
      category: z.string(),
      pack_type: z.string(),
      risk_level: z.string(),
      orders: z.number().int(),
      resolved_packs: z.number().int(),
      open_pulls: z.number().int(),
    }),
  ),
  by_strategy: z
    .array(ModelFigures.extend({ strategy: z.string(), version: z.string() }))
    .describe('per strategy version (the first 12 hex digits of its digest), in the order first used'),
  series: z
    .array(
      z.strictObject({ at: Time, expected_net_usd: Usd, realized_net_usd: Usd, gap_usd: Usd, se_usd: Usd }),
    )
    .describe('cumulative, after each order in decision order (at most 200 points, the last kept)'),
});
/** @public vocabulary of the bot's API (and `report --json`); nothing imports it yet */
export type ModelBlock = z.infer<typeof ModelBlock>;

export const PnlResponse = z.strictObject({
  accounts: z.array(
    z.strictObject({
      name: z.string(),
      points: z.array(PnlPoint),
      model: ModelBlock.describe("the account's orders against the model's promise"),
    }),
  ),
});
export type PnlResponse = z.infer<typeof PnlResponse>;

const DecisionView = z.strictObject({
  action: z.enum(['sell_back', 'list', 'hold', 'reprice', 'delist']),
  reason: z.string(),
  price_usd: Usd.nullable().describe('sell-back payout or listing price decided'),
  at: Time,
});

export const PullView = z.strictObject({
  seq: z.number().int().describe('insertion order (the events stream resumes after it)'),
  pull_id: z.string(),
  account: z.string(),
  card_id: z.string(),
  name: z.string(),
  kind: z.enum(['card', 'sealed_pack']),
  grade: z.string().nullable().describe('grading company and rank, e.g. `PSA 10`'),
  value_usd: Usd,
  image_url: z.string().nullable(),
  rarity: z.string(),
  is_chase: z.boolean(),
  pulled_at: Time,
  status: z.string().describe('ledger pull status'),
  decision: DecisionView.nullable().describe('the latest decision'),
  outcome: z.strictObject({
    kind: z.enum(['sold_back', 'listing_filled', 'listed', 'held', 'pending', 'gone']),
    amount_usd: Usd.nullable().describe('payout, proceeds or listing price'),
    at: Time.nullable(),
  }),
});
export type PullView = z.infer<typeof PullView>;
export const PullsResponse = z.strictObject({ pulls: z.array(PullView) });
export type PullsResponse = z.infer<typeof PullsResponse>;

export const OrderView = z.strictObject({
  key: z.string(),
  account: z.string(),
  operation: z.enum(['pack', 'card']),
  state: z.enum(['pending', 'sent', 'in_doubt', 'parked', 'confirmed', 'failed']),
  in_doubt: z
    .boolean()
    .describe(
      'sent, no clear answer yet and not on the wire now (parked included): blocks new orders of its account',
    ),
  category: z.string().nullable().describe('null for a card order until its card is booked'),
  pack_type: z.string().nullable().describe('pack orders; null for a card order'),
  risk_level: z.string().nullable().describe('pack orders; null for a card order'),
  quantity: z.number().int().describe('packs of a pack order; 1 for a card order'),
  card_id: z.string().nullable().describe('card orders; null for a pack order'),
  card_name: z.string().nullable().describe("card orders: the bought card's name once booked"),
  charged_usd: Usd.nullable().describe(
    "what the order cost (a card's price + fee): the service's figure from its answer, or bound_usd when settled without one (amount_is_bound); null until settled, 0 once failed",
  ),
  price_usd: Usd.nullable().describe(
    "card orders: the card's price as booked (null until then, and for packs)",
  ),
  fee_usd: Usd.nullable().describe("card orders: the buyer's fee as booked (null until then, and for packs)"),
  bound_usd: Usd.describe(
    'the most one charge of it can be: a card order its max_price + fee, a pack order its planned price × packs',
  ),
  amount_is_bound: z
    .boolean()
    .describe(
      "true while the amount is only bound_usd: unsettled, or settled without the service's answer (charged_usd = bound_usd)",
    ),
  created_at: Time,
  updated_at: Time,
  first_sent_at: Time.nullable(),
  attempts: z.number().int(),
  key_forgotten: z
    .boolean()
    .describe('a re-send was answered as a new order: the key is never re-sent blind'),
  error_code: z.string().nullable(),
  error_message: z
    .string()
    .nullable()
    .describe('why it failed, or why the evidence cannot settle it yet (a parked order)'),
  settled_by: z.string().nullable(),
});
export type OrderView = z.infer<typeof OrderView>;
export const OrdersResponse = z.strictObject({
  in_doubt: z.number().int().describe('orders in doubt (of the account asked for)'),
  orders: z.array(OrderView),
});
export type OrdersResponse = z.infer<typeof OrdersResponse>;

export const ListingView = z.strictObject({
  listing_id: z.string(),
  account: z.string(),
  card_id: z.string(),
  pull_id: z.string().nullable(),
  name: z.string(),
  price_usd: Usd,
  value_usd: Usd.nullable().describe(
    "the card's value at the listing watch's last vault read, the value at pull before one (the basis of the schedule and sell_back_at)",
  ),
  listed_at: Time,
  repriced_at: Time.nullable(),
  schedule: z
    .array(z.strictObject({ at: Time, markup: z.number(), price_usd: Usd.nullable() }))
    .describe('planned repricing steps (at value_usd), up to the sell-back deadline'),
  sell_back_at: Time.describe('when the listing gives up and sells back if still unsold'),
  lock_ends_at: Time.nullable().describe('end of the 7-day value lock of the sell-back offer'),
});
export type ListingView = z.infer<typeof ListingView>;
export const ListingsResponse = z.strictObject({ listings: z.array(ListingView) });
export type ListingsResponse = z.infer<typeof ListingsResponse>;

const ScoreRowView = z.strictObject({
  category: z.string(),
  pack_type: z.string(),
  name: z.string(),
  risk_level: z.string(),
  price_usd: Usd,
  ev_usd: Usd,
  ev_ratio: z.number().nullable(),
  realized_ev_ratio: z.number().nullable(),
  p_loss: z.number(),
  decision: z.enum(['open', 'wait']),
  reason: z.string(),
});
export const ScoresResponse = z.strictObject({
  accounts: z.array(
    z.strictObject({
      name: z.string(),
      scored_at: Time.nullable(),
      decision: z
        .strictObject({ action: z.enum(['open', 'wait']), reason: z.string() })
        .nullable()
        .describe('what the open loop decided from these rows'),
      rows: z.array(ScoreRowView),
    }),
  ),
});
export type ScoresResponse = z.infer<typeof ScoresResponse>;

export const ControlResult = z.strictObject({
  action: z.enum(['pause', 'resume', 'delist', 'sell-back', 'reload']),
  ok: z.boolean(),
  by: z.string(),
  reason: z.string(),
  message: z.string(),
  cards: z
    .array(
      z.strictObject({
        account: z.string(),
        card_id: z.string(),
        result: z.string().describe('delisted, sold, queued, not listed, failed: …'),
      }),
    )
    .describe('delist and sell-back: each card acted on'),
  pause: PauseInfo.nullable().describe('pause and resume: the new state'),
});
export type ControlResult = z.infer<typeof ControlResult>;

/** One server-sent event of `/api/v1/events` (`event:` name = `type`, `data:` = the JSON). */
export const BotEvent = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('status'), status: StatusResponse }),
  z.strictObject({ type: z.literal('pull'), pull: PullView }),
  z.strictObject({ type: z.literal('order'), order: OrderView }),
  z.strictObject({ type: z.literal('pause'), pause: PauseInfo }),
]);
export type BotEvent = z.infer<typeof BotEvent>;

/** Every refusal and failure: what went wrong, for a person. */
const ApiError = z.strictObject({ error: z.string() });

export const Health = z.strictObject({ status: z.literal('ok') });
export const Ready = z.strictObject({ status: z.literal('ready') });
export const NotReady = z.strictObject({
  status: z.literal('not ready'),
  reason: z.string().optional().describe('e.g. `ledger closed`, `API not reachable …`'),
});

/** The kill switch as the first version's `/control/…` routes show it (camelCase, epoch ms). */
export const KillSwitchStatus = z.strictObject({
  paused: z.boolean(),
  reasons: z.array(z.enum(['file', 'endpoint'])),
  file: z.string().optional().describe('the kill switch file watched'),
  pausedAt: z.number().optional().describe('epoch ms when the endpoint pause was set'),
  by: z.string().optional(),
  note: z.string().optional(),
});

/**
 * Every JSON answer by name: its JSON Schema is `schemas/api-<name>.schema.json` and its OpenAPI
 * component the name in PascalCase. A route's JSON answer must be one of these (a test checks).
 */
export const API_SCHEMAS = {
  status: StatusResponse,
  pnl: PnlResponse,
  pulls: PullsResponse,
  orders: OrdersResponse,
  listings: ListingsResponse,
  scores: ScoresResponse,
  event: BotEvent,
  control: ControlResult,
  error: ApiError,
  health: Health,
  ready: Ready,
  'not-ready': NotReady,
  'kill-switch': KillSwitchStatus,
} as const;
