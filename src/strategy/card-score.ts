/**
 * Shop cards scored like pulls: what a card bought at `price` can be expected to realize by the
 * strategy's exit, against what it costs (price + the 1 USD fee, spec). A bought card's sell-back
 * offer is locked for 7 days to min(price paid, value at purchase) (spec), so the listing life is
 * priced at that basis: a card bought below its value is worth waiting on.
 */
import { CARD_FEE_USD, LATE_RATE } from '../api/rules.js';
import type { ShopCard } from '../api/schemas.js';
import { compareText } from '../core/compare-text.js';
import { type Cents, toCents } from '../core/money.js';
import { fastRate, fastRound } from './cents.js';
import { listingLife } from './listing-life.js';
import { minListingCents, priceWithinRules } from './listing-model.js';
import type { PullPlan } from './pull-policy.js';
import type { Strategy, WatchEntry } from './strategy-schema.js';

/** Why the scorer skips a card (a bounded set: metrics label the skipped cards by it). */
export type CardSkipCode = 'disabled' | 'category' | 'watch_limit' | 'price_cap' | 'edge';

export type CardDecision =
  | { action: 'buy'; maxPriceCents: Cents }
  | { action: 'skip'; code: CardSkipCode; reason: string };

export interface CardRow {
  category: string;
  card_id: string;
  name: string;
  grading_company: string | null;
  grading_rank: number | null;
  /** USD: shop price, buyer fee, market value, and what the exit is expected to realize. */
  price: number;
  fee: number;
  value: number;
  realizable: number;
  /** realizable / (price + fee). */
  edge_ratio: number;
  /** Highest price at which the card still pays for itself (realizable = price + fee); null: none. */
  break_even_price: number | null;
  /** Highest price at which the edge reaches `min_edge_ratio`; null: none. */
  max_edge_price: number | null;
  /** The watchlist entry the card matches (its index), or null. */
  watch: number | null;
  decision: CardDecision;
}

/**
 * What the strategy's exit does with a card worth `valueCents` bought at `priceCents`, and what it
 * is expected to realize (cents): the one rule shared by the scorer (which prices a purchase with
 * it) and the bot (which acts on a bought card with it), so what is scored is what is done.
 */
export type BoughtCardPlan =
  | { action: 'hold'; reason: string; realizableCents: number }
  | {
      action: 'sell_back';
      reason: 'exit_sell_back' | 'not_listable' | 'listing_not_better';
      payoutCents: Cents;
      realizableCents: number;
    }
  /** Listed as a pull is (the pull policy's listing plan), at the card's lock basis. */
  | (Extract<PullPlan, { action: 'list' }> & { realizableCents: number });

export function planBoughtCard(valueCents: number, priceCents: number, strategy: Strategy): BoughtCardPlan {
  const basis = Math.min(priceCents, valueCents);
  const sellBack = fastRate(basis, LATE_RATE);
  const exit = strategy.cards.exit;
  const sell = (reason: 'exit_sell_back' | 'not_listable' | 'listing_not_better'): BoughtCardPlan => ({
    action: 'sell_back',
    reason,
    payoutCents: sellBack,
    realizableCents: sellBack,
  });
  if (exit === 'sell_back' || valueCents <= 0) return sell('exit_sell_back');
  if (exit === 'hold') return { action: 'hold', reason: 'cards.exit is hold', realizableCents: valueCents };
  const listPrice = priceWithinRules(valueCents, strategy.sell.list.markup, minListingCents(strategy));
  if (listPrice === null) return sell('not_listable');
  const life = listingLife(strategy, basis / valueCents);
  const listed = valueCents * life.expectedYield;
  if (strategy.sell.list.only_when_better && listed <= sellBack) return sell('listing_not_better');
  return {
    action: 'list',
    priceCents: listPrice,
    fill: life.fill,
    saleCents: fastRound(valueCents * life.saleYield),
    fallbackCents: fastRound(valueCents * life.fallbackYield),
    expectedCents: listed,
    realizableCents: listed,
  };
}

/** What a card worth `valueCents` bought at `priceCents` is expected to realize by the exit (cents). */
export function cardRealizableCents(valueCents: number, priceCents: number, strategy: Strategy): number {
  return planBoughtCard(valueCents, priceCents, strategy).realizableCents;
}

/**
 * The highest price (cents) at which realizable ≥ ratio × (price + fee), or null when even a free
 * card falls short. realizable grows at most 0.8 per cent of price (the lock basis) while the
 * cost grows by `ratio` ≥ 1, so the condition holds below one price and fails above it.
 */
export function highestPriceCents(valueCents: number, strategy: Strategy, ratio: number): Cents | null {
  const fee = toCents(CARD_FEE_USD);
  const ok = (p: number) => cardRealizableCents(valueCents, p, strategy) >= ratio * (p + fee);
  if (!ok(0)) return null;
  let lo = 0;
  let hi = Math.max(1, 4 * valueCents);
  if (ok(hi)) return hi;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Whether a shop card is the one a watchlist entry wants. */
export function watches(entry: WatchEntry, card: ShopCard): boolean {
  if (entry.card_id !== undefined) return card.id === entry.card_id;
  if (!card.name.toLowerCase().includes(entry.name!.toLowerCase())) return false;
  if (
    entry.grading_company !== undefined &&
    (card.grading_company ?? '').toLowerCase() !== entry.grading_company.toLowerCase()
  )
    return false;
  if (entry.min_grade !== undefined && !((card.grading_rank ?? Number.NEGATIVE_INFINITY) >= entry.min_grade))
    return false;
  return true;
}

const usd = (cents: number): number => fastRound(cents) / 100;

export function scoreShopCard(card: ShopCard, category: string, strategy: Strategy): CardRow {
  const cards = strategy.cards;
  const priceCents = toCents(card.price);
  const valueCents = toCents(card.market_value);
  const feeCents = toCents(CARD_FEE_USD);
  const realizable = cardRealizableCents(valueCents, priceCents, strategy);
  const edge = realizable / (priceCents + feeCents);
  const breakEven = highestPriceCents(valueCents, strategy, 1);
  const atEdge = highestPriceCents(valueCents, strategy, cards.min_edge_ratio);
  const watch = cards.watchlist.findIndex((w) => watches(w, card));
  const row: CardRow = {
    category,
    card_id: card.id,
    name: card.name,
    grading_company: card.grading_company ?? null,
    grading_rank: card.grading_rank ?? null,
    price: usd(priceCents),
    fee: usd(feeCents),
    value: usd(valueCents),
    realizable: usd(realizable),
    edge_ratio: Math.round(edge * 1e6) / 1e6,
    break_even_price: breakEven === null ? null : usd(breakEven),
    max_edge_price: atEdge === null ? null : usd(atEdge),
    watch: watch >= 0 ? watch : null,
    decision: { action: 'skip', code: 'disabled', reason: '' },
  };
  row.decision = decideCard(row, priceCents, atEdge, strategy);
  return row;
}

function decideCard(
  row: CardRow,
  priceCents: number,
  atEdge: Cents | null,
  strategy: Strategy,
): CardDecision {
  const cards = strategy.cards;
  if (!cards.enabled) return { action: 'skip', code: 'disabled', reason: 'card buying disabled' };
  if (!(cards.categories as readonly string[]).includes(row.category))
    return { action: 'skip', code: 'category', reason: `category ${row.category} not in strategy` };
  if (row.watch !== null) {
    const limit = toCents(cards.watchlist[row.watch]!.max_price_usd);
    if (priceCents <= limit) return { action: 'buy', maxPriceCents: limit };
    return {
      action: 'skip',
      code: 'watch_limit',
      reason: `watchlist #${row.watch + 1}: price above its limit ${usd(limit)}`,
    };
  }
  const cap = toCents(cards.max_price_usd);
  if (priceCents > cap)
    return { action: 'skip', code: 'price_cap', reason: `price above max_price_usd ${cards.max_price_usd}` };
  if (atEdge === null || priceCents > atEdge)
    return {
      action: 'skip',
      code: 'edge',
      reason: `edge ${row.edge_ratio.toFixed(3)} below ${cards.min_edge_ratio}`,
    };
  return { action: 'buy', maxPriceCents: Math.min(atEdge, cap) };
}

/** Every card of the shop scored, buys first, then by edge (best first). */
export function scoreShop(
  shop: readonly { category: string; cards: readonly ShopCard[] }[],
  strategy: Strategy,
): CardRow[] {
  const rows = shop.flatMap((s) => s.cards.map((c) => scoreShopCard(c, s.category, strategy)));
  return rows.sort(
    (a, b) =>
      Number(b.decision.action === 'buy') - Number(a.decision.action === 'buy') ||
      b.edge_ratio - a.edge_ratio ||
      compareText(a.card_id, b.card_id),
  );
}
