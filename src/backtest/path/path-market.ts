/**
 * The market a backtest path trades against. Two models share one interface so that the path's
 * scheduling and decision replay is the same code for both:
 * - static: pools never change (draws with replacement) and listings follow the scorer's fill
 *   model: exactly what `packbot score` assumes, so means converge to its realized EV;
 * - dynamic: the simulator's world dynamics (depletion, restock, other users, value drift, the
 *   market's own listing fill model) — see dynamic-market.ts.
 */

import type { Rng } from '../../core/prng.js';
import type { ScoreRow } from '../../strategy/score.js';

/** A card we listed. Times in ms, amounts in cents. */
export interface Listing {
  pool: number;
  plan: number;
  category: string;
  pulledAt: number;
  listedAt: number;
  basisCents: number;
  priceCents: number;
  /** The category's value index when the card was pulled (dynamic value drift). */
  anchorIndex: number;
  /** When the listing ends: it sells, or it is delisted and sold back (set by `list`). */
  eventAt: number;
  /** How it ends (set by `list`; pending before). */
  outcome: 'sold' | 'sold_back' | 'pending';
  /** Dynamic model: what is left of the exponential draw the fill hazard must use up for a sale. */
  fillBudget: number;
  /** What the end pays: the sale net of the fee, or the sell-back. */
  amountCents: number;
  /** The path model's slot of the order the pull came from while the listing runs (path-model.ts); -1: none. */
  modelOrder: number;
  /**
   * A shop card we bought (absent for a pull): `pool` is NO_POOL, `pulledAt` is the purchase,
   * `basisCents` the locked sell-back basis min(price paid, value at purchase) and `valueCents`
   * the value at purchase (a pull's value is its basis).
   */
  bought?: true;
  valueCents?: number;
}

/**
 * A pull's or a bought card's listing before the market's `list` decides how it ends. `reuse`, a
 * static path's ended listing, is written over field by field (the same shape, no allocation);
 * without it a new listing is made.
 */
export function pendingListing(
  reuse: Listing | undefined,
  pool: number,
  plan: number,
  category: string,
  t: number,
  basisCents: number,
  priceCents: number,
): Listing {
  if (reuse === undefined)
    return {
      pool,
      plan,
      category,
      pulledAt: t,
      listedAt: t,
      basisCents,
      priceCents,
      anchorIndex: 1,
      eventAt: t,
      outcome: 'pending',
      amountCents: 0,
      fillBudget: 0,
      modelOrder: -1,
    };
  reuse.pool = pool;
  reuse.plan = plan;
  reuse.category = category;
  reuse.pulledAt = t;
  reuse.listedAt = t;
  reuse.basisCents = basisCents;
  reuse.priceCents = priceCents;
  reuse.anchorIndex = 1;
  reuse.eventAt = t;
  reuse.outcome = 'pending';
  reuse.amountCents = 0;
  reuse.fillBudget = 0;
  reuse.modelOrder = -1;
  return reuse;
}

/** Where the next pull of a pool goes, per pack (cents, cents²): the sell-back and held parts. */
export interface DrawParts {
  sellMean: number;
  sellM2: number;
  heldMean: number;
  heldM2: number;
}

/** `Listing.pool` of a bought shop card (it came from no pool). */
export const NO_POOL = -1;

export interface PathMarket {
  /** Brings the market's own processes (other users, restock, drift) up to `now`. */
  advance(now: number): void;
  /** The score rows the bot would decide from now, at a balance of `balanceCents`. */
  rows(balanceCents: number, now: number): readonly ScoreRow[];
  /**
   * The bot decides at `now` without the rows and will never read them again on this path (no pack
   * can be opened any more: `rowsNeverRead`): instead of `rows`, which it would have called here.
   * The market keeps the cadence `rows` gives `nextRefreshAt` and builds no row.
   */
  rowsUnread(now: number): void;
  /**
   * The rows as last made, not rescored, for a decision that reads no row's numbers, at most
   * whether some row is open (`rowNumbersUnread`: no pack can be opened now). The market keeps
   * the cadence `rows` gives `nextRefreshAt`, and the next `rows` rescores as if due. Absent: the
   * path calls `rows`.
   */
  rowsAsLast?(balanceCents: number, now: number): readonly ScoreRow[];
  /** When rows should be looked at again even if nothing of ours changed (Infinity: never). */
  nextRefreshAt(now: number): number;
  /**
   * Opens `qty` packs of pool `pool` as one all-or-nothing order: writes each pull's plan index
   * into `out` and returns `qty`, or returns -1 when the order fails (nothing pulled or charged).
   */
  open(pool: number, qty: number, now: number, rng: Rng, out: Int32Array): number;
  /**
   * Where the next pull of `pool` goes, per pack, as the distribution it is drawn from now says
   * (the sell-back and held parts of the order's promise: path-model.ts).
   */
  drawParts(pool: number, now: number, out: DrawParts): void;
  /**
   * Decides a new listing's end at once (`outcome`, `eventAt`, `amountCents`): nothing the path
   * sees changes before it (repricing does not; equity counts the card at its sell-back value).
   */
  list(l: Listing, now: number, rng: Rng): void;
  /** What selling a listed card back would pay at `now` (equity is marked at sell-back value). */
  holdValue(l: Listing, now: number): number;
  /** The shop, when this market models it (dynamic market, shop recorded, cards enabled); else null. */
  readonly shop: ShopMarket | null;
  /**
   * Static markets only: what `decideOpen` would pick from the rows `rows` returned last, when
   * every open row fits the budget (`RowsPick`); lets the path repeat a decision without asking
   * again when it provably cannot differ (path.ts). Absent: the path always asks.
   */
  lastPick?(): RowsPick | null;
}

/**
 * The rows' part of an open decision, for a set of rows that never changes: the row `decideOpen`
 * picks when every open row with a price fits (`best`, null when none is open), its budget price,
 * the largest such price (headroom at least this much means every such row fits), its realized EV
 * and spread per pack (cents). Equal picks are one object (interned by the static market).
 */
export interface RowsPick {
  best: ScoreRow | null;
  priceCents: number;
  maxPriceCents: number;
  realizedEvCents: number;
  sdCents: number;
}

/** A shop card the strategy would buy now (scoreShopCard's decision 'buy'), at the current price. */
export interface ShopOffer {
  /** Which stock entry (the market's handle for `buy`). */
  serial: number;
  category: string;
  cardId: string;
  priceCents: number;
  valueCents: number;
  /** The scorer's `maxPriceCents` (the purchase's `max_price`), set by `buy` (0 before). */
  maxPriceCents: number;
  edge: number;
  /** Bought because a watchlist entry wants it (these come first). */
  watched: boolean;
}

/** The shop side of a market (dynamic market only; see shop.ts). */
export interface ShopMarket {
  /** How often the bot reads the shop and buys (ms; `card_sync_minutes`). */
  readonly syncMs: number;
  /** The world's card rules: the buyer fee, and the daily count and spend (prices) caps. */
  readonly feeCents: number;
  readonly dailyCountCap: number;
  readonly dailySpendCapCents: number;
  /** What selling a card bought at `at` back pays at once (its locked basis; `sellBackAmount`). */
  sellBackNow(basisCents: number, valueCents: number, at: number): number;
  /** The cards the strategy buys now: watched ones first, then best edge first (then by card id). */
  offers(now: number): readonly ShopOffer[];
  /**
   * Our purchase: the scorer confirms the card at its current price and sets `maxPriceCents`, and
   * the card leaves the shop; false (nothing bought) if it would not buy it at that price.
   */
  buy(offer: ShopOffer): boolean;
  /**
   * A bought card's life as a listing (`l.bought`, `l.valueCents` set): decided at once, like a
   * pull's (PathMarket.list), with the purchase's value lock; draws from the shop's own stream.
   */
  listCard(l: Listing, now: number): void;
  /** Anchors a bought card that is kept (`hold`) to its category's value index now. */
  anchor(l: Listing): void;
  /** A bought card's market value now (its value at purchase moved by its category's index). */
  valueNow(l: Listing): number;
}
