/**
 * What one Monte Carlo path (path.ts, `runPath`) is given and what it returns: its options, its
 * result record, and the layout of the card totals in that record.
 */
import type { CardsSetup } from './cards-setup.js';
import type { ShopOffer } from './path-market.js';

/**
 * Per path, when cards are backtested: cards bought, their prices, fees, listing sales (net of
 * the seller fee), sell-backs, holdings at the end (kept cards at market value, listed ones at
 * their sell-back value), net, and the most cards bought on one UTC day…
 */
export const CARD_TOTALS = 8;
/** …then per category of `CardsSetup.categories`: cards bought, outlay (price + fee), value (proceeds + holdings). */
export const CARD_CATEGORY_FIELDS = 3;

/** Numbers per path of the card rows (0 when cards are not backtested). */
export function cardWidth(cards: Pick<CardsSetup, 'backtested' | 'categories'> | null | undefined): number {
  return cards?.backtested ? CARD_TOTALS + CARD_CATEGORY_FIELDS * cards.categories.length : 0;
}

export type MarketKind = 'static' | 'dynamic';

/** Per path: packs, spend, payout, listing, holdings, net, maxDd, ruined. */
export const TOTALS = 8;
/** Per path and pool: packs, spend, value realized, and the scorer's realized EV of what was opened (cents). */
export const POOL_FIELDS = 4;

/** One card purchase (`PathOptions.cardLog`, for tests and inspection). */
export interface CardBuy extends ShopOffer {
  at: number;
}

export interface PathResult {
  index: number;
  /** Equity (cash + holdings at sell-back value), cents, at the start and after each day. */
  equity: Float64Array;
  packs: number;
  spendCents: number;
  payoutCents: number;
  listingCents: number;
  holdingsCents: number;
  netPnlCents: number;
  maxDrawdownCents: number;
  /** Stopped by the stop-loss, or left unable to afford any pack above the reserve. */
  ruined: boolean;
  /** Per pool (model.pools order): packs opened, spend and value realized (cents). */
  poolPacks: Float64Array;
  poolSpend: Float64Array;
  poolValue: Float64Array;
  /** Per pool: Σ over orders of quantity × the realized EV of the row the order was opened on (cents). */
  poolExpected: Float64Array;
  /** Purchases per UTC day (index: day since the start's UTC day). */
  packsByUtcDay: number[];
  /** Cards (CARD_TOTALS, then CARD_CATEGORY_FIELDS per category); empty when cards are not backtested. */
  cards: Float64Array;
  /** Expected vs realized (path-model.ts): MODEL_FIELDS sums, and MODEL_POOL_FIELDS per pool. */
  model: Float64Array;
  modelPools: Float64Array;
}

export interface PathOptions {
  days: number;
  seed: number;
  /** Card buying as the engine set it up (null or absent: the strategy buys no cards). */
  cards?: CardsSetup | null;
  /** When given, every card purchase is appended to it. */
  cardLog?: CardBuy[];
  /**
   * Ask the market for rows at every decision, also once none is read (`rowsNeverRead`): for tests
   * that check that stopping then changes nothing.
   */
  readEveryRow?: boolean;
  /**
   * Ask `decideOpen` at every slot and after every cash change, as the bot does. By default a
   * static market's path repeats the last decision where it provably cannot differ (`repeatOpen`
   * below); this switch is for the test that both give the same orders.
   */
  decideEverySlot?: boolean;
  /** When given, counts the decisions repeated and the waits not asked again (for that test). */
  skipped?: { repeated: number; waits: number };
  /**
   * The caller reads the totals alone (the optimizer: net P&L, drawdown, ruin): the model's sums
   * (`model`, `modelPools`) and the pools' value realized (`poolValue`) are not kept (zeros), which
   * spares each order the law of its pulls (`drawParts`, a scan of the pack's cards) and the
   * model's bookkeeping. Nothing the path decides reads them, so every other figure is the same.
   */
  totalsOnly?: boolean;
}
