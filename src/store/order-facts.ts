/**
 * What an order is, in one place: its quantity, category and card, what it costs (its bound, its
 * worst case, how it is booked when settled without the service's answer), and whether it is
 * unsettled, in doubt or parked. Every part that asks — the ledger's booking, the in-doubt judge,
 * the adoption of stray pulls, the budget gauge, status, the read API and `packbot orders` — asks
 * these functions, so a word means the same wherever an operator reads it. Pure: rows in, facts out.
 *
 * The three states an operator sees (docs/ledger.md, "Unsettled, in doubt, parked"):
 *
 * | intent | unsettled | in doubt | parked |
 * |---|---|---|---|
 * | `pending` (recorded, never sent) | yes | no | no |
 * | `sent`, its request on the wire | yes | no | no |
 * | `sent`, no process sending it (interrupted) | yes | yes | no |
 * | `in_doubt` | yes | yes | no |
 * | `in_doubt` with `parked_at` | yes | yes | yes |
 * | `confirmed`, `failed` | no | no | no |
 */
import { CARD_FEE_USD, DEFAULT_CATEGORY, DEFAULT_QUANTITY, DEFAULT_RISK_LEVEL } from '../api/rules.js';
import { type Cents, toCents } from '../core/money.js';
import { type OpenOrder, worstCaseCents } from '../strategy/budget.js';
import type { Intent, IntentOperation, IntentState, OrderRow, PullRow } from './types.js';

/**
 * Unsettled: recorded and not yet known to be confirmed or failed (`pending`, `sent`, `in_doubt`,
 * parked ones included). Whatever is unsettled may still cost money: the budget counts each at its
 * worst case (`worstCaseOf`), and `Ledger.unresolvedIntents` returns exactly these.
 */
export const UNSETTLED_STATES: readonly IntentState[] = Object.freeze(['pending', 'sent', 'in_doubt']);

/** See `UNSETTLED_STATES`. */
export function isUnsettled(i: Pick<Intent, 'state'>): boolean {
  return UNSETTLED_STATES.includes(i.state);
}

/**
 * Sent and unsettled: at least one attempt left and no answer settled it (`sent` or `in_doubt`),
 * on the wire or not. The service may have run it without the ledger knowing yet, so its pulls,
 * its pack count and its report row would be mistaken for another order's: the evidence and the
 * adoption of stray pulls stand back from its window.
 */
export function isSentUnsettled(i: Pick<Intent, 'state'>): boolean {
  return i.state === 'sent' || i.state === 'in_doubt';
}

/** Whether a process has the order's request on the wire now (the executor knows; the ledger not). */
export type OnTheWire = (key: string) => boolean;

/**
 * What a reader of the ledger alone assumes: no request on the wire. The running bot passes its
 * executor's own; a command reading the ledger beside a running bot counts a `sent` order in doubt
 * for the moment its request is out.
 */
const NOTHING_ON_THE_WIRE: OnTheWire = () => false;

/**
 * In doubt: sent at least once and no clear answer yet, excluding an order whose request is on the
 * wire right now (its own answer settles it): an `in_doubt` intent, or a `sent` one no process is
 * sending (the process stopped mid-send). A `pending` intent never left, so it is not in doubt. An
 * order in doubt blocks new orders of its account until evidence, a replay or an operator settles
 * it; the `packbot_orders_in_doubt` gauge, status, the read API and `packbot orders --in-doubt`
 * count these.
 */
export function isInDoubt(
  i: Pick<Intent, 'key' | 'state'>,
  onTheWire: OnTheWire = NOTHING_ON_THE_WIRE,
): boolean {
  return isSentUnsettled(i) && !onTheWire(i.key);
}

/**
 * Parked: in doubt with `parked_at` set — the evidence could not settle it. Read again on a
 * backoff, never re-sent; it waits for the evidence or `packbot orders settle`.
 */
export function isParked(i: Pick<Intent, 'key' | 'state' | 'parkedAt'>, onTheWire?: OnTheWire): boolean {
  return i.parkedAt !== null && isInDoubt(i, onTheWire);
}

/** The state an operator reads: the intent's, with a parked `in_doubt` shown as `parked`. */
export type OrderState = IntentState | 'parked';

export function stateOf(i: Pick<Intent, 'key' | 'state' | 'parkedAt'>): OrderState {
  return isParked(i) ? 'parked' : i.state;
}

// ---------------------------------------------------------------- what was ordered

type Ordered = Pick<Intent, 'operation' | 'body'>;

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * Packs in a pack order: the body's `quantity` when it is a whole number from 1, else the spec's
 * default (1). A card order buys one card.
 */
export function quantityOf(i: Ordered): number {
  if (i.operation === 'card') return 1;
  const q = i.body.quantity;
  return typeof q === 'number' && Number.isInteger(q) && q >= 1 ? q : DEFAULT_QUANTITY;
}

/**
 * The category an order is booked in: the body's, else the spec's default. A card order's body
 * names none: its answer's card does (`confirmIntent`); settled without an answer it gets the default.
 */
export function categoryOf(i: Ordered): string {
  return text(i.body.category) ?? DEFAULT_CATEGORY;
}

/** A pack order's pack type (null for a card order, or a body without one). */
export function packTypeOf(i: Ordered): string | null {
  return i.operation === 'pack' ? text(i.body.pack_type) : null;
}

/** A pack order's risk level, the spec's default when the body omits it; null for a card order. */
export function riskLevelOf(i: Ordered): string | null {
  return i.operation === 'pack' ? (text(i.body.risk_level) ?? DEFAULT_RISK_LEVEL) : null;
}

/** A card order's card (null for a pack order). */
export function cardIdOf(i: Ordered): string | null {
  return i.operation === 'card' ? text(i.body.card_id) : null;
}

/** One line naming what was ordered: `2 × starter (pokemon, standard)`, or `card c-123`. */
export function describeOrder(i: Ordered): string {
  if (i.operation === 'card') return `card ${cardIdOf(i) ?? '?'}`;
  return `${quantityOf(i)} × ${packTypeOf(i) ?? '?'} (${categoryOf(i)}, ${riskLevelOf(i)})`;
}

// ---------------------------------------------------------------- what it costs

type Priced = Pick<Intent, 'operation' | 'body' | 'unitPriceCents'>;

/** The buyer's fee of a card purchase (spec: 1 USD), in cents. */
const CARD_FEE_CENTS: Cents = toCents(CARD_FEE_USD);

/**
 * The order as the budget's worst case reads it (strategy/budget.ts `worstCaseCents`): the planned
 * price per pack — or a card order's `max_price` (the intent's unit price) — its quantity and the
 * attempts that left.
 */
function openOrderOf(i: Priced & Pick<Intent, 'attempts'>): OpenOrder {
  return {
    operation: i.operation,
    unitPriceCents: i.unitPriceCents,
    quantity: quantityOf(i),
    attempts: i.attempts,
  };
}

/**
 * The bound of one charge: the most one run of the order can cost, a pack order's planned price ×
 * its packs, a card order's `max_price` + the buyer's fee. The service's own charge replaces it
 * once an answer gives it (a card's price is often below its `max_price`).
 */
export function boundCents(i: Priced): Cents {
  return worstCaseCents(openOrderOf({ ...i, attempts: 1 }));
}

/**
 * The worst case of an unsettled order, what every spend cap counts it at: its bound once per
 * attempt that left (a service that forgot the key charges each as a new order), and once before
 * the first leaves (strategy/budget.ts `worstCaseCents` decides; this gives it the inputs).
 */
export function worstCaseOf(i: Priced & Pick<Intent, 'attempts'>): Cents {
  return worstCaseCents(openOrderOf(i));
}

/** How an order settled as charged without the service's answer is booked (`confirmBySettlement`). */
export interface ChargeAtBound {
  quantity: number;
  totalChargedCents: Cents;
  /** A card order: the price and fee it is booked at. */
  card?: { priceCents: Cents; feeCents: Cents };
}

/**
 * An order settled as charged with no answer to say what it cost (evidence, an operator, a further
 * charge found by its pulls) is booked at its bound: packs at the planned price, a card at its
 * `max_price` + fee. `quantity` overrides the order's own for a charge that pulled more.
 */
export function chargeAtBound(i: Priced, quantity = quantityOf(i)): ChargeAtBound {
  if (i.operation === 'card') {
    const priceCents = i.unitPriceCents ?? 0;
    return {
      quantity: 1,
      totalChargedCents: boundCents(i),
      card: { priceCents, feeCents: CARD_FEE_CENTS },
    };
  }
  return { quantity, totalChargedCents: (i.unitPriceCents ?? 0) * quantity };
}

/** Unsettled orders of an account summed for its gauges (`packbot_orders_in_doubt` and beside it). */
export interface DoubtFigures {
  unsettled: number;
  inDoubt: number;
  parked: number;
  /** `worstCaseOf` summed over the unsettled ones. */
  worstCaseCents: Cents;
}

export function doubtFigures(intents: readonly Intent[], onTheWire?: OnTheWire): DoubtFigures {
  const out: DoubtFigures = { unsettled: 0, inDoubt: 0, parked: 0, worstCaseCents: 0 };
  for (const i of intents) {
    if (!isUnsettled(i)) continue;
    out.unsettled++;
    out.worstCaseCents += worstCaseOf(i);
    if (isInDoubt(i, onTheWire)) out.inDoubt++;
    if (isParked(i, onTheWire)) out.parked++;
  }
  return out;
}

/** Orders in doubt, parked ones first, then the oldest: the order an operator settles them in. */
export function inDoubtFirst(intents: readonly Intent[], onTheWire?: OnTheWire): Intent[] {
  return intents
    .filter((i) => isInDoubt(i, onTheWire))
    .sort((a, b) => Number(b.parkedAt !== null) - Number(a.parkedAt !== null) || a.createdAt - b.createdAt);
}

// ---------------------------------------------------------------- an order as a whole

/**
 * Everything a view shows of an order, in cents. `chargedCents` is what the ledger books as
 * charged: the service's own figure when an answer (fresh or replayed) gave it; the bound when it
 * was settled without one (`amountIsBound`); null while unsettled; 0 once failed (nothing charged).
 */
export interface OrderFacts {
  key: string;
  account: string;
  operation: IntentOperation;
  state: OrderState;
  unsettled: boolean;
  inDoubt: boolean;
  parked: boolean;
  /** Null for a card order before its card is booked (its body names no category). */
  category: string | null;
  packType: string | null;
  riskLevel: string | null;
  quantity: number;
  cardId: string | null;
  /** The bought card's name once the ledger holds it. */
  cardName: string | null;
  chargedCents: Cents | null;
  /** A card order as booked: the card's price and the buyer's fee (null for packs and until booked). */
  priceCents: Cents | null;
  feeCents: Cents | null;
  /** `boundCents`: the most one charge of it can be. */
  boundCents: Cents;
  /** The amount is only the bound: unsettled, or booked at the bound without the service's answer. */
  amountIsBound: boolean;
}

/**
 * The facts of an intent and, once booked, its order and pulls (a card order's one pull names its
 * card). `onTheWire` as `isInDoubt` takes it.
 */
export function orderFacts(
  i: Intent,
  booked?: { order: OrderRow; pulls: readonly Pick<PullRow, 'name'>[] },
  onTheWire?: OnTheWire,
): OrderFacts {
  const order = i.state === 'confirmed' ? booked?.order : undefined;
  const card = i.operation === 'card';
  const unsettled = isUnsettled(i);
  const charged = order ? order.totalChargedCents : i.state === 'failed' ? 0 : null;
  return {
    key: i.key,
    account: i.account,
    operation: i.operation,
    state: stateOf(i),
    unsettled,
    inDoubt: isInDoubt(i, onTheWire),
    parked: isParked(i, onTheWire),
    category: order?.category ?? (card ? null : categoryOf(i)),
    packType: order?.packType ?? packTypeOf(i),
    riskLevel: order?.riskLevel ?? riskLevelOf(i),
    quantity: order?.quantity ?? quantityOf(i),
    cardId: order?.cardId ?? cardIdOf(i),
    cardName: card && order ? (booked?.pulls[0]?.name ?? null) : null,
    chargedCents: charged,
    priceCents: card ? (order?.priceCents ?? null) : null,
    feeCents: card ? (order?.feeCents ?? null) : null,
    boundCents: boundCents(i),
    // The service's answer is stored with the intent; an order booked without one has none (but
    // the holder of adopted foreign cards costs nothing by definition: no bound about it).
    amountIsBound:
      unsettled || (i.state === 'confirmed' && i.responseJson === null && i.body.foreign !== true),
  };
}
