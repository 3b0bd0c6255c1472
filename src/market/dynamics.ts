/**
 * The rest of the world, advanced lazily up to "now" on every call: other users open packs and buy
 * shop cards (Poisson processes); on a fixed tick new cards arrive (each band and shop refills a
 * share of its gap to its initial size), market values drift and simulated buyers fill listings at
 * a price-sensitive rate. Events are applied in time
 * order and never before the last synced time, so a closed report window never changes. The laws of
 * each event are src/strategy/market-laws.ts (shared with the backtest's fast world); this file schedules them.
 */
import { CATEGORIES, type RiskLevel } from '../api/schemas.js';
import {
  bandGap,
  fillProbability,
  fillRatePerDay,
  indexFactor,
  NO_CHOICE,
  nextEventDelayMs,
  othersRiskLevel,
  pickByGap,
  pickByPopularity,
  pickByStock,
  pickEqual,
  refillCount,
  refillShare,
  valueStep,
} from '../strategy/market-laws.js';
import {
  cardValue,
  drawable,
  drawPull,
  forgetGoneIds,
  generateBandCard,
  generateShopCard,
  newDraw,
  type PoolState,
  releaseGone,
} from './inventory.js';
import { listingSold, nextProceedsAt, payDueProceeds } from './proceeds.js';
import { recordOpening } from './report-log.js';
import { addOtherListing, type MarketState } from './state.js';

const DAY = 86_400_000;

type Process = 'open' | 'shop_buy' | 'arrival';

function ratePerHour(s: MarketState, p: Process): number {
  const d = s.world.dynamics;
  switch (p) {
    case 'open':
      return d.others_pack_openings_per_hour;
    case 'shop_buy':
      return d.others_shop_purchases_per_hour;
    case 'arrival':
      return d.restock_cards_per_hour_per_pack * s.inv.pools.length;
  }
}

const PROCESSES: Process[] = ['open', 'shop_buy', 'arrival'];

function schedule(s: MarketState, p: Process, from: number): number {
  return from + nextEventDelayMs(ratePerHour(s, p), s.dyn);
}

export function advanceDynamics(s: MarketState, to: number): void {
  if (to <= s.syncedTo) return;
  for (const p of PROCESSES) if (s.nextEvent[p] === undefined) s.nextEvent[p] = schedule(s, p, s.syncedTo);
  for (;;) {
    let next: Process | 'tick' = 'tick';
    let at = s.nextTickAt;
    for (const p of PROCESSES) {
      const t = s.nextEvent[p]!;
      if (t < at) {
        at = t;
        next = p;
      }
    }
    // Listing proceeds due before the next event (or by `to`) are paid first, at their own time.
    const payAt = nextProceedsAt(s);
    if (payAt !== undefined && payAt <= at && payAt <= to) {
      s.syncedTo = Math.max(s.syncedTo, payAt);
      payDueProceeds(s, payAt);
      continue;
    }
    if (at > to) break;
    s.syncedTo = at;
    if (next === 'tick') {
      tick(s, at);
      s.nextTickAt = at + s.world.dynamics.tick_seconds * 1000;
    } else {
      fire(s, next, at);
      s.nextEvent[next] = schedule(s, next, at);
    }
  }
  s.syncedTo = to;
}

function fire(s: MarketState, p: Process, at: number): void {
  switch (p) {
    case 'open':
      otherOpening(s, at);
      break;
    case 'shop_buy':
      otherShopPurchase(s, at);
      break;
    case 'arrival':
      arrival(s);
      break;
  }
}

/** Other users' openings' draw, read before the next one (no object per opening). */
const OPENING = newDraw();

function otherOpening(s: MarketState, at: number): void {
  const candidates: PoolState[] = [];
  const popularity: number[] = [];
  for (const pool of s.inv.pools) {
    if (!pool.spec.purchasable || !pool.spec.available || pool.spec.popularity <= 0) continue;
    if (!drawable(pool, at)) continue;
    candidates.push(pool);
    popularity.push(pool.spec.popularity);
  }
  if (candidates.length === 0) return;
  const pool = candidates[pickByPopularity(s.dyn.next(), popularity)]!;
  const risks = pool.spec.risk_levels;
  const risk: RiskLevel = risks[othersRiskLevel(risks.length, risks.indexOf('standard'), s.dyn)]!;
  const d = OPENING;
  if (!drawPull(s.inv, pool, risk, at, s.dyn, d)) return;
  const card = s.inv.cards[d.slot]!;
  card.loc = 'gone';
  if (d.band >= 0) releaseGone(s.inv, card, at); // a chase card stays: its pool refers to it
  const dy = s.world.dynamics;
  recordOpening(s.report, {
    at,
    userId: s.otherUsers[s.dyn.int(s.otherUsers.length)]!,
    amountCents: s.dyn.next() < dy.others_free_opening_fraction ? 0 : pool.priceCents,
    pool: pool.index,
    internal: s.dyn.next() < dy.others_internal_fraction,
  });
}

function otherShopPurchase(s: MarketState, at: number): void {
  // A category in proportion to its stock, then one of its cards uniformly.
  const c = pickByStock(
    CATEGORIES.map((cat) => s.inv.shop[cat].size),
    s.dyn,
  );
  if (c === NO_CHOICE) return;
  const set = s.inv.shop[CATEGORIES[c]!];
  let k = s.dyn.int(set.size);
  for (const slot of set) {
    if (k-- > 0) continue;
    set.delete(slot);
    const card = s.inv.cards[slot]!;
    card.loc = 'gone';
    releaseGone(s.inv, card, at);
    return;
  }
}

/** One new card in a random pack's band that is below its initial size (continuous arrivals). */
function arrival(s: MarketState): void {
  if (s.inv.pools.length === 0) return;
  // Every pack's arrivals at the same rate: the superposed process picks the pack uniformly.
  const pool = s.inv.pools[pickEqual(s.inv.pools.length, s.dyn)]!;
  const size = pool.bands.map((b) => b.initialCount);
  const count = pool.bands.map((b) => b.bag.count);
  let total = 0;
  for (let i = 0; i < size.length; i++) total += bandGap(size[i]!, count[i]!);
  if (total <= 0) return;
  const bi = pickByGap(s.dyn.int(total), size, count, 0, size.length);
  if (bi !== NO_CHOICE) generateBandCard(s.inv, pool, pool.bands[bi]!, s.dyn);
}

/** New cards arrive: each band and each shop refills part of its gap to its initial size. */
function restock(s: MarketState, dtHours: number): void {
  const share = refillShare(s.world.dynamics.restock_fraction_per_hour, dtHours);
  for (const pool of s.inv.pools)
    for (const b of pool.bands) {
      const n = refillCount(bandGap(b.initialCount, b.bag.count), share, s.dyn);
      for (let i = 0; i < n; i++) generateBandCard(s.inv, pool, b, s.dyn);
    }
  const shopShare = refillShare(s.world.dynamics.shop_restock_fraction_per_hour, dtHours);
  for (const c of CATEGORIES) {
    const target = s.world.categories[c]?.shop.generate?.count ?? 0;
    const n = refillCount(bandGap(target, s.inv.shop[c].size), shopShare, s.dyn);
    for (let i = 0; i < n; i++) generateShopCard(s.inv, c, s.dyn);
  }
}

function tick(s: MarketState, at: number): void {
  const d = s.world.dynamics;
  const dtDays = (d.tick_seconds * 1000) / DAY;
  const step = valueStep(d.value_daily_trend, d.value_daily_volatility, dtDays);
  for (const c of CATEGORIES) s.inv.index[c] *= indexFactor(step, s.dyn.normal());
  restock(s, dtDays * 24);
  fillListings(s, at, dtDays);
  forgetGoneIds(s.inv, at);
  for (const c of CATEGORIES) {
    let have = 0;
    for (const slot of s.inv.listings) if (s.inv.cards[slot]!.category === c) have++;
    const shop = s.world.categories[c]?.shop;
    if (shop && (shop.generate?.count ?? 0) + shop.cards.length > 0)
      for (; have < d.others_listings_per_category; have++) addOtherListing(s, c, at);
  }
}

function fillListings(s: MarketState, at: number, dtDays: number): void {
  const d = s.world.dynamics;
  for (const slot of [...s.inv.listings]) {
    const c = s.inv.cards[slot]!;
    const l = c.listing!;
    const rate = fillRatePerDay(
      l.priceCents,
      cardValue(s.inv, c),
      d.listing_fills_per_day_at_value,
      d.listing_price_sensitivity,
    );
    if (s.dyn.next() >= fillProbability(rate, dtDays)) continue;
    s.inv.listings.delete(slot);
    if (l.seller !== null) listingSold(s, l.seller, l.id, l.priceCents, at);
    c.listing = null;
    c.loc = 'gone';
    c.owner = null;
    releaseGone(s.inv, c, at); // an account's card stays: its acquisition answers sell-back
  }
}
