/**
 * One Monte Carlo path: the bot's schedule replayed on virtual time. At every purchase slot the
 * strategy's own `decideOpen` picks what to open from the strategy's own score rows; each pull is
 * handled as `decidePull` decided (cached per value in PullPlans); listings follow the market
 * model. Everything is integer cents except sealed-pack worth (a fraction of a value), which is
 * rounded once at the end. No IO, no promises, no per-pull objects.
 */
import { DAY_MS, HOUR_MS, nextUtcMidnight } from '../../core/clock.js';
import { roundHalfAway, toCents } from '../../core/money.js';
import { Rng } from '../../core/prng.js';
import { budgetBlock, markedPnlCents, spendHeadroom } from '../../strategy/budget.js';
import { cardBuyRoom } from '../../strategy/decide-card.js';
import {
  decideOpen,
  type OpenDecision,
  type OpenState,
  opensAgain,
  opensPick,
  rowNumbersUnread,
  rowsNeverRead,
  waitCashCannotLift,
} from '../../strategy/decide-open.js';
import type { ScoreRow } from '../../strategy/score.js';
import { balanceBucketCents } from './balance-bucket.js';
import { ListingHeap } from './listing-heap.js';
import { type BacktestModel, horizonEnd, poolKey } from './model.js';
import { CARD_CATEGORY_FIELDS, CARD_TOTALS, type PathOptions, type PathResult } from './path-io.js';
import { type Listing, NO_POOL, type PathMarket, pendingListing, type RowsPick } from './path-market.js';
import { MODEL_FIELDS, MODEL_POOL_FIELDS, newDrawParts, PathModel } from './path-model.js';
import { ACT_HOLD, ACT_LIST, ACT_SELL, listExit } from './pull-plans.js';

/** The rows a decision gets once it reads none (`rowsNeverRead`). */
const NO_ROWS: readonly ScoreRow[] = [];

/** Path i's random stream: a function of (seed, i) only, whatever worker runs it. */
function pathRng(seed: number, index: number): Rng {
  return new Rng(seed).fork(index);
}

export function runPath(
  model: BacktestModel,
  market: PathMarket,
  index: number,
  opts: PathOptions,
): PathResult {
  const rng = pathRng(opts.seed, index);
  const strategy = model.strategy;
  const plans = model.plans;
  const pools = model.pools;
  const nPools = pools.length;
  const start = model.startMs;
  const end = horizonEnd(model, opts.days);
  const startCash = model.startBalanceCents;
  const minGap = model.limits.minSecondsBetween * 1000;
  const reserve = toCents(strategy.budget.min_balance_usd);
  let cheapest = Number.POSITIVE_INFINITY;
  for (const p of pools)
    if (p.dist && p.row?.decision.action === 'open') cheapest = Math.min(cheapest, p.priceCents);

  const equity = new Float64Array(opts.days + 1);
  const poolPacks = new Float64Array(nPools);
  const poolSpend = new Float64Array(nPools);
  const poolValue = new Float64Array(nPools);
  const poolExpected = new Float64Array(nPools);
  const packsByUtcDay: number[] = [];
  /** The UTC day of the time loop (days since the start's), moved on at each midnight. */
  let utcDay = 0;
  const out = new Int32Array(10);
  const listings = new ListingHeap();
  const pm = opts.totalsOnly ? null : new PathModel(strategy, nPools, plans, end);
  const drawn = newDrawParts();

  const state = startOpenState(model);
  let cash = startCash;
  let packs = 0;
  let spend = 0;
  let payout = 0;
  let listingProceeds = 0;
  let sealedWorth = 0; // fractional cents
  let listedHold = 0;
  let peak = startCash;
  let maxDd = 0;
  let ruined = false;
  /** No pack can be opened any more (`rowsNeverRead`, for good once true): rows are not built. */
  let rowsDone = false;
  let cheapestPool = Number.POSITIVE_INFINITY;
  for (const p of pools) cheapestPool = Math.min(cheapestPool, p.priceCents);

  // Cards (shop purchases), when the market models the shop and the strategy buys cards.
  const shop = opts.cards?.backtested ? market.shop : null;
  const cardCats = shop ? opts.cards!.categories : [];
  const cards = new Float64Array(shop ? CARD_TOTALS + CARD_CATEGORY_FIELDS * cardCats.length : 0);
  const cardCat = new Map(cardCats.map((c, i) => [c, CARD_TOTALS + CARD_CATEGORY_FIELDS * i]));
  const cardRules = strategy.cards;
  const cardMaxPerDay = shop ? Math.min(cardRules.max_per_day, shop.dailyCountCap) : 0;
  let nextCardSync = shop ? start : Number.POSITIVE_INFINITY;
  let cardsToday = 0;
  let cardOutlayToday = 0; // price + fee (the strategy's cap)
  let cardPricesToday = 0; // prices only (the world's cap)
  let cardSales = 0;
  let cardSellBacks = 0;
  let cardMostInADay = 0;
  /** Cards bought and kept (`hold`): valued at market (equity), at sell-back (budget). */
  const held: Listing[] = [];
  let heldMarket = 0;
  let heldSellBack = 0;
  let heldMarkedUntil = Number.NEGATIVE_INFINITY;
  // Kept cards move with the values (on the hourly tick at most): marked again after an hour.
  const markHeld = (now: number) => {
    if (held.length === 0 || now < heldMarkedUntil) return;
    heldMarket = 0;
    heldSellBack = 0;
    for (const h of held) {
      heldMarket += shop!.valueNow(h);
      heldSellBack += market.holdValue(h, now);
    }
    heldMarkedUntil = now + HOUR_MS;
  };

  const mark = () => {
    const eq = cash + sealedWorth + listedHold + heldMarket;
    if (eq > peak) peak = eq;
    else if (peak - eq > maxDd) maxDd = peak - eq;
  };
  const holdingsAt = (now: number) => {
    let h = sealedWorth;
    for (const l of listings.all()) h += market.holdValue(l, now);
    if (held.length > 0) {
      heldMarkedUntil = Number.NEGATIVE_INFINITY;
      markHeld(now);
      h += heldMarket;
    }
    return h;
  };

  /** A bought card ends (sold or sold back): what it paid goes to the card rows. */
  const cardProceeds = (category: string, outcome: Listing['outcome'], cents: number) => {
    if (outcome === 'sold') cardSales += cents;
    else cardSellBacks += cents;
    const o = cardCat.get(category)!;
    cards[o + 2] = cards[o + 2]! + cents;
  };

  /**
   * A full sync of the shop: the scorer's buys, best edge first, each within the strategy's
   * per-day count and spend (price + fee), the world's daily caps (count; prices), the budget
   * (headroom: daily and total spend, balance reserve; no buying once a guard blocks) and the cash.
   */
  const buyCards = (t: number) => {
    if (cardsToday >= cardMaxPerDay) return;
    markHeld(t);
    state.balanceCents = cash;
    state.markedPnlCents = markedPnlCents(cash - startCash, heldSellBack, listedHold, sealedWorth);
    if (budgetBlock(state, strategy)) return;
    const fee = shop!.feeCents;
    // The strategy's caps and budget, as the bot's card buyer asks them (strategy/decide-card.ts):
    // the room they leave changes only with a purchase, so it is asked once per purchase, and an
    // offer (the scorer's buy at its price) fits when its price does. Then the world's own caps
    // and the cash.
    const roomNow = () =>
      cardBuyRoom(
        { ...state, cardsToday, cardOutlayTodayCents: cardOutlayToday },
        strategy,
        t,
        cardMaxPerDay,
      );
    let room = roomNow();
    for (const o of shop!.offers(t)) {
      if (room.action === 'stop') break;
      if (o.priceCents > room.cents) continue;
      const cost = o.priceCents + fee;
      if (cardPricesToday + o.priceCents > shop!.dailySpendCapCents) continue;
      if (cost > cash) continue;
      // The scorer confirms at the current price and its max_price is the purchase's.
      if (!shop!.buy(o)) continue;
      opts.cardLog?.push({ ...o, at: t });
      cash -= cost;
      state.balanceCents = cash;
      state.spentTodayCents += cost;
      state.spentTotalCents += cost;
      cardsToday++;
      cardOutlayToday += cost;
      cardPricesToday += o.priceCents;
      if (cardsToday > cardMostInADay) cardMostInADay = cardsToday;
      cards[0] = cards[0]! + 1;
      cards[1] = cards[1]! + o.priceCents;
      cards[2] = cards[2]! + fee;
      const c = cardCat.get(o.category)!;
      cards[c] = cards[c]! + 1;
      cards[c + 1] = cards[c + 1]! + cost;
      // Spec: the sell-back offer of a bought card is locked to min(price paid, value at purchase) for 7 days.
      const basis = Math.min(o.priceCents, o.valueCents);
      const exit = cardRules.exit === 'list' ? listExit(o.valueCents, basis, strategy) : null;
      const bought = pendingListing(
        undefined,
        NO_POOL,
        -1,
        o.category,
        t,
        basis,
        exit?.list ? exit.priceCents : 0,
      );
      bought.bought = true;
      bought.valueCents = o.valueCents;
      if (cardRules.exit === 'hold') {
        shop!.anchor(bought);
        held.push(bought);
        heldMarkedUntil = Number.NEGATIVE_INFINITY;
        markHeld(t);
      } else if (exit?.list) {
        shop!.listCard(bought, t);
        listings.push(bought);
        listedHold += market.holdValue(bought, t);
      } else {
        const a = shop!.sellBackNow(basis, o.valueCents, t);
        cash += a;
        state.balanceCents = cash;
        cardProceeds(o.category, 'sold_back', a);
      }
      mark();
      room = roomNow();
    }
  };

  let nextMidnight = nextUtcMidnight(start);
  let nextSample = start + DAY_MS;
  let sample = 1;
  let tDecide = start;
  let lastCat = '';
  let lastPack = '';
  let lastRisk = '';
  let lastPi: number | undefined;
  equity[0] = startCash;

  // A static market's rows depend on the balance bucket only, and each bucket's rows carry the row
  // decideOpen picks when every open row fits (`RowsPick`, interned). Then an open decision is a
  // function of the pick, the day's packs, the rate limit, the cool-down, the guards and the
  // headroom: while those give the same answer, the last decision is repeated as it is.
  const repeatable = market.lastPick !== undefined && !opts.decideEverySlot;
  let runPick: RowsPick | null = null;
  let runD: OpenDecision | null = null;
  const spareListings: Listing[] = [];
  /**
   * After listings ended at `t` (cash changed): whether a decision at `t` would only wait for what
   * the path already waits for (the day's packs or the rate limit, which cash cannot lift) and
   * change nothing else (no guard starts, no ruin is found): then it is not asked.
   */
  const waitHolds = (t: number): boolean => {
    if (tDecide <= t) return false;
    // NaN (no such wait) matches no instant.
    if (Math.max(waitCashCannotLift(state, t), t + 1) !== tDecide) return false;
    state.balanceCents = cash;
    state.markedPnlCents = markedPnlCents(cash - startCash, heldSellBack, listedHold, sealedWorth);
    if (budgetBlock(state, strategy) !== null) return false;
    return ruined || !ruinFound();
  };
  /** The wait's ruin test (no guard blocks): out of cash for any pack above the reserve, nothing listed. */
  const ruinFound = (): boolean =>
    cash - reserve < cheapest &&
    !(shop && cheapest === Number.POSITIVE_INFINITY) &&
    spendHeadroom(state, strategy).limitedBy === 'balance_reserve' &&
    listings.size === 0;

  for (;;) {
    const nextListing = listings.nextAt();
    const t = Math.min(tDecide, nextListing, nextMidnight, nextSample, nextCardSync);
    if (t >= end) break;
    if (nextListing <= t) {
      // Listings ending: sales, delists with sell-back (decided when listed).
      market.advance(t);
      while (listings.nextAt() <= t) {
        const l = listings.pop();
        // A listing counts at its sell-back value as of listing (fixed per listing) while it lasts.
        listedHold -= market.holdValue(l, l.listedAt);
        cash += l.amountCents;
        if (l.bought) cardProceeds(l.category, l.outcome, l.amountCents);
        else {
          if (pm) {
            pm.ended(l, l.amountCents);
            poolValue[l.pool] = poolValue[l.pool]! + l.amountCents;
          }
          if (l.outcome === 'sold') listingProceeds += l.amountCents;
          else payout += l.amountCents;
          // A static market keeps nothing of an ended listing: its object serves a later pull.
          if (repeatable) spareListings.push(l);
        }
        mark();
      }
      // Cash changed: the bot may open again (unless it provably waits as it did).
      if (!repeatable || !waitHolds(t)) tDecide = Math.min(tDecide, t);
      else if (opts.skipped) opts.skipped.waits++;
      continue;
    }
    if (nextMidnight <= t) {
      state.packsLeftToday = model.limits.maxPacksPerDay;
      state.spentTodayCents = 0;
      cardsToday = 0;
      cardOutlayToday = 0;
      cardPricesToday = 0;
      nextMidnight += DAY_MS;
      utcDay++;
      state.resetsAt = nextMidnight;
      tDecide = Math.min(tDecide, t);
      continue;
    }
    if (nextSample <= t) {
      market.advance(t);
      equity[sample++] = roundHalfAway(cash + holdingsAt(t));
      nextSample += DAY_MS;
      continue;
    }
    if (nextCardSync <= t) {
      market.advance(t);
      buyCards(t);
      nextCardSync = t + shop!.syncMs;
      continue;
    }

    // A purchase slot.
    market.advance(t);
    state.balanceCents = cash;
    // The stop-loss's marking is the bot's: cards at sell-back value, sealed packs at the fraction.
    state.markedPnlCents = markedPnlCents(cash - startCash, heldSellBack, listedHold, sealedWorth);
    // Once no pack can be opened again, the decision does not read the rows: none is built.
    if (!rowsDone && !opts.readEveryRow && rowsNeverRead(state, strategy, cheapestPool)) rowsDone = true;
    let rows: readonly ScoreRow[] = NO_ROWS;
    if (rowsDone) market.rowsUnread(t);
    // No pack can be opened now whatever the rows say: the dynamic market does not rescore for it.
    else if (market.rowsAsLast && !opts.readEveryRow && rowNumbersUnread(state, strategy, cheapestPool, t))
      rows = market.rowsAsLast(balanceBucketCents(cash), t);
    else rows = market.rows(balanceBucketCents(cash), t);
    const pick = repeatable ? market.lastPick!() : null;
    const repeated: boolean =
      repeatable &&
      !rowsDone &&
      pick !== null &&
      pick === runPick &&
      runD !== null &&
      opensAgain(state, strategy, pick, runD, t);
    const d: OpenDecision = repeated ? runD! : decideOpen(state, rows, strategy, t);
    if (repeated && opts.skipped) opts.skipped.repeated++;
    if (repeatable && !repeated && d.action === 'open') {
      // A wait leaves the last one: `opensAgain` checks everything the answer depends on.
      runPick = opensPick(d, pick) ? pick : null;
      runD = runPick ? d : null;
    }
    if (d.action === 'wait') {
      if (!ruined) {
        const block = budgetBlock(state, strategy);
        if (block?.guard === 'stop_loss') ruined = true;
        // A card buyer that opens no pack is not ruined for want of one (cheapest is then ∞).
        else if (
          cash - reserve < cheapest &&
          !(shop && cheapest === Number.POSITIVE_INFINITY) &&
          spendHeadroom(state, strategy).limitedBy === 'balance_reserve'
        )
          ruined = listings.size === 0;
      }
      tDecide = d.until !== undefined ? Math.max(d.until, t + 1) : market.nextRefreshAt(t);
      continue;
    }
    // Rows are reused, so the same strings come back: look the key up only when they change.
    if (d.category !== lastCat || d.pack_type !== lastPack || d.risk_level !== lastRisk) {
      lastCat = d.category;
      lastPack = d.pack_type;
      lastRisk = d.risk_level;
      lastPi = model.poolIndex.get(poolKey(d.category, d.pack_type, d.risk_level));
    }
    const pi = lastPi;
    // The law the pulls are drawn from, before they are (the order's sell-back and held parts).
    if (pi !== undefined && pm) market.drawParts(pi, t, drawn);
    const got = pi === undefined ? -1 : market.open(pi, d.quantity, t, rng, out);
    if (pi === undefined || got < 0) {
      // A failed order is refunded and gives its slot back; the market has marked the pack.
      tDecide = t + 1000;
      continue;
    }
    const cost = d.quantity * d.priceCents;
    cash -= cost;
    spend += cost;
    packs += d.quantity;
    poolPacks[pi] = poolPacks[pi]! + d.quantity;
    poolSpend[pi] = poolSpend[pi]! + cost;
    poolExpected[pi] = poolExpected[pi]! + d.quantity * d.realizedEvCents;
    pm?.order(pi, d.quantity, d.realizedEvCents, repeated ? pick!.sdCents : rowSdCents(rows, d), cost, drawn);
    packsByUtcDay[utcDay] = (packsByUtcDay[utcDay] ?? 0) + d.quantity;
    state.packsLeftToday -= d.quantity;
    state.spentTodayCents += cost;
    state.spentTotalCents += cost;
    state.lastPurchaseAt = t;
    state.nextPurchaseAt = t + minGap;
    // The order's sums run in locals (the same additions in the same order): the closures above
    // capture these variables, so each store to them would allocate a number.
    let orderCash = cash;
    let orderPayout = payout;
    let orderSealed = sealedWorth;
    let orderListed = listedHold;
    const category = pools[pi]!.category;
    for (let k = 0; k < got; k++) {
      const j = out[k]!;
      const act = plans.action[j]!;
      if (act === ACT_SELL) {
        const a = plans.amount[j]!;
        orderCash += a;
        orderPayout += a;
      } else if (act === ACT_HOLD) {
        const a = plans.amount[j]!;
        orderSealed += a;
      } else if (act === ACT_LIST) {
        const l = pendingListing(
          spareListings.pop(),
          pi,
          j,
          category,
          t,
          plans.value[j]!,
          plans.listPrice[j]!,
        );
        market.list(l, t, rng);
        listings.push(l);
        orderListed += market.holdValue(l, t);
        pm?.listed(l);
      }
    }
    cash = orderCash;
    payout = orderPayout;
    sealedWorth = orderSealed;
    listedHold = orderListed;
    // The pulls sold back or held, into the model's sums and the pool's value realized.
    if (pm) {
      pm.resolvedPulls(pi, out, got, poolValue);
      pm.orderDone();
    }
    mark();
    tDecide = state.nextPurchaseAt;
  }

  market.advance(end);
  let holdings = sealedWorth;
  let cardHoldings = 0;
  for (const l of listings.all()) {
    const h = market.holdValue(l, end);
    if (l.bought) {
      cardHoldings += h;
      const o = cardCat.get(l.category)!;
      cards[o + 2] = cards[o + 2]! + h;
      continue;
    }
    holdings += h;
    if (pm) {
      poolValue[l.pool] = poolValue[l.pool]! + h;
      pm.open(l, h);
    }
  }
  pm?.finish();
  for (const h of held) {
    const v = shop!.valueNow(h);
    cardHoldings += v;
    const o = cardCat.get(h.category)!;
    cards[o + 2] = cards[o + 2]! + v;
  }
  return finishPath({
    index,
    equity,
    sample,
    days: opts.days,
    cash,
    holdings,
    cardHoldings,
    startCash,
    peak,
    maxDd,
    packs,
    spend,
    payout,
    listingProceeds,
    ruined,
    poolPacks,
    poolSpend,
    poolValue,
    poolExpected,
    packsByUtcDay,
    cards: finishCards(cards, cardSales, cardSellBacks, cardHoldings, cardMostInADay),
    pm,
  });
}

/** What a path loop has at its end: its sums, for `finishPath`. */
export interface PathEnd {
  index: number;
  equity: Float64Array;
  /** The first equity sample not yet written; it and the rest up to `days` hold the final equity. */
  sample: number;
  days: number;
  cash: number;
  /** What pulls still held or listed are worth at the end (fractional cents). */
  holdings: number;
  /** What bought cards still held or listed are worth (cents; 0 without card buying). */
  cardHoldings: number;
  startCash: number;
  peak: number;
  maxDd: number;
  packs: number;
  spend: number;
  payout: number;
  listingProceeds: number;
  ruined: boolean;
  poolPacks: Float64Array;
  poolSpend: Float64Array;
  poolValue: Float64Array;
  poolExpected: Float64Array;
  packsByUtcDay: number[];
  cards: Float64Array;
  /** Finished (`PathModel.finish`). */
  /** Null: the model's sums are not kept (`PathOptions.totalsOnly`). */
  pm: PathModel | null;
}

/**
 * A path's result from its end sums, for the general loop and the static one alike: holdings and
 * each pool's value rounded to the cent, the days left sampled at the final equity, and the
 * drawdown down to it.
 */
function finishPath(e: PathEnd): PathResult {
  const holdingsCents = roundHalfAway(e.holdings);
  const finalEquity = e.cash + holdingsCents + e.cardHoldings;
  for (let s = e.sample; s <= e.days; s++) e.equity[s] = finalEquity;
  let maxDd = e.maxDd;
  if (e.peak - finalEquity > maxDd) maxDd = e.peak - finalEquity;
  const poolValue = e.poolValue;
  for (let i = 0; i < poolValue.length; i++) poolValue[i] = roundHalfAway(poolValue[i]!);
  return {
    index: e.index,
    equity: e.equity,
    packs: e.packs,
    spendCents: e.spend,
    payoutCents: e.payout,
    listingCents: e.listingProceeds,
    holdingsCents,
    netPnlCents: finalEquity - e.startCash,
    maxDrawdownCents: roundHalfAway(maxDd),
    ruined: e.ruined,
    poolPacks: e.poolPacks,
    poolSpend: e.poolSpend,
    poolValue,
    poolExpected: e.poolExpected,
    packsByUtcDay: e.packsByUtcDay,
    cards: e.cards,
    model: e.pm ? e.pm.totals : new Float64Array(MODEL_FIELDS),
    modelPools: e.pm ? e.pm.pools : new Float64Array(e.poolPacks.length * MODEL_POOL_FIELDS),
  };
}

/** A path's open state at its start: the snapshot's balance and first day's packs, nothing spent. */
function startOpenState(model: BacktestModel): OpenState {
  return {
    balanceCents: model.startBalanceCents,
    spentTodayCents: 0,
    spentTotalCents: 0,
    markedPnlCents: 0,
    killSwitch: false,
    packsLeftToday: model.limits.packsLeftFirstDay,
    nextPurchaseAt: null,
    resetsAt: nextUtcMidnight(model.startMs),
    lastPurchaseAt: null,
  };
}

/** The spread per pack (cents) of the row an order was opened on. */
export function rowSdCents(
  rows: readonly ScoreRow[],
  d: { category: string; pack_type: string; risk_level: string },
) {
  for (const r of rows)
    if (r.category === d.category && r.pack_type === d.pack_type && r.risk_level === d.risk_level)
      return toCents(r.realized_stdev);
  return 0;
}

/** The card totals' last fields, once the path is over. */
function finishCards(
  cards: Float64Array,
  sales: number,
  sellBacks: number,
  holdings: number,
  mostInADay: number,
): Float64Array {
  if (cards.length === 0) return cards;
  cards[3] = sales;
  cards[4] = sellBacks;
  cards[5] = holdings;
  cards[6] = sales + sellBacks + holdings - cards[1]! - cards[2]!;
  cards[7] = mostInADay;
  return cards;
}
