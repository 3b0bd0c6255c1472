/**
 * The rest of the world, advanced lazily up to "now" on every call: other users open packs and buy
 * shop cards (Poisson processes); on a fixed tick new cards arrive (each band and shop refills a
 * share of its gap to its initial size), market values drift and simulated buyers fill listings at
 * a price-sensitive rate. Events are applied in time
 * order and never before the last synced time, so a closed report window never changes.
 */
import { CATEGORIES, type Category, type RiskLevel } from '../api/schemas.js';
import { applyRate } from '../core/money.js';
import {
  cardValue,
  drawable,
  drawPull,
  generateBandCard,
  generateShopCard,
  type PoolState,
} from './inventory.js';
import { addOtherListing, type MarketState, record } from './state.js';

const HOUR = 3_600_000;
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
  const r = ratePerHour(s, p);
  return r > 0 ? from + Math.max(1, Math.round(s.dyn.exponential(r) * HOUR)) : Number.POSITIVE_INFINITY;
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

function otherOpening(s: MarketState, at: number): void {
  const candidates: PoolState[] = [];
  let total = 0;
  for (const pool of s.inv.pools) {
    if (!pool.spec.purchasable || !pool.spec.available || pool.spec.popularity <= 0) continue;
    if (!drawable(pool, at)) continue;
    candidates.push(pool);
    total += pool.spec.popularity;
  }
  if (candidates.length === 0) return;
  let x = s.dyn.next() * total;
  let pool = candidates[candidates.length - 1]!;
  for (const c of candidates) {
    if (x < c.spec.popularity) {
      pool = c;
      break;
    }
    x -= c.spec.popularity;
  }
  const risks = pool.spec.risk_levels;
  const risk: RiskLevel =
    risks.includes('standard') && s.dyn.next() < 0.6 ? 'standard' : risks[s.dyn.int(risks.length)]!;
  const d = drawPull(s.inv, pool, risk, at, s.dyn);
  if (!d) return;
  const card = s.inv.cards[d.slot]!;
  card.loc = 'gone';
  const dy = s.world.dynamics;
  s.report.push({
    at,
    userId: s.otherUsers[s.dyn.int(s.otherUsers.length)]!,
    amountCents: s.dyn.next() < dy.others_free_opening_fraction ? 0 : pool.priceCents,
    source: pool.spec.report_source ?? pool.category,
    packType: pool.spec.pack_type,
    internal: s.dyn.next() < dy.others_internal_fraction,
  });
}

function pickCategory(s: MarketState, weight: (c: Category) => number): Category | undefined {
  let total = 0;
  for (const c of CATEGORIES) total += weight(c);
  if (!(total > 0)) return undefined;
  let x = s.dyn.next() * total;
  for (const c of CATEGORIES) {
    const w = weight(c);
    if (x < w) return c;
    x -= w;
  }
  return undefined;
}

function otherShopPurchase(s: MarketState, _at: number): void {
  const cat = pickCategory(s, (c) => s.inv.shop[c].size);
  if (!cat) return;
  const set = s.inv.shop[cat];
  let k = s.dyn.int(set.size);
  for (const slot of set) {
    if (k-- > 0) continue;
    set.delete(slot);
    s.inv.cards[slot]!.loc = 'gone';
    return;
  }
}

/** One new card in a random pack's band that is below its initial size (continuous arrivals). */
function arrival(s: MarketState): void {
  if (s.inv.pools.length === 0) return;
  const pool = s.inv.pools[s.dyn.int(s.inv.pools.length)]!;
  let total = 0;
  for (const b of pool.bands) total += Math.max(0, b.initialCount - b.bag.count);
  if (total <= 0) return;
  let x = s.dyn.int(total);
  for (const b of pool.bands) {
    const gap = Math.max(0, b.initialCount - b.bag.count);
    if (x < gap) {
      generateBandCard(s.inv, pool, b, s.dyn);
      return;
    }
    x -= gap;
  }
}

/** Whole number of new cards for a gap: expected gap·(1−e^(−rate·dt)), rounded stochastically. */
function refillCount(s: MarketState, gap: number, ratePerHour: number, dtHours: number): number {
  if (gap <= 0 || ratePerHour <= 0) return 0;
  const expected = gap * (1 - Math.exp(-ratePerHour * dtHours));
  const whole = Math.floor(expected);
  return Math.min(gap, whole + (s.dyn.next() < expected - whole ? 1 : 0));
}

/** New cards arrive: each band and each shop refills part of its gap to its initial size. */
function restock(s: MarketState, dtHours: number): void {
  const rate = s.world.dynamics.restock_fraction_per_hour;
  for (const pool of s.inv.pools)
    for (const b of pool.bands) {
      const n = refillCount(s, b.initialCount - b.bag.count, rate, dtHours);
      for (let i = 0; i < n; i++) generateBandCard(s.inv, pool, b, s.dyn);
    }
  const shopRate = s.world.dynamics.shop_restock_fraction_per_hour;
  for (const c of CATEGORIES) {
    const target = s.world.categories[c]?.shop.generate?.count ?? 0;
    const n = refillCount(s, target - s.inv.shop[c].size, shopRate, dtHours);
    for (let i = 0; i < n; i++) generateShopCard(s.inv, c, s.dyn);
  }
}

function tick(s: MarketState, at: number): void {
  const d = s.world.dynamics;
  const dtDays = (d.tick_seconds * 1000) / DAY;
  const sigma = d.value_daily_volatility;
  for (const c of CATEGORIES) {
    const step =
      (d.value_daily_trend - (sigma * sigma) / 2) * dtDays + sigma * Math.sqrt(dtDays) * s.dyn.normal();
    s.inv.index[c] *= Math.exp(step);
  }
  restock(s, dtDays * 24);
  fillListings(s, at, dtDays);
  for (const c of CATEGORIES) {
    let have = 0;
    for (const slot of s.inv.listings) if (s.inv.cards[slot]!.category === c) have++;
    const shop = s.world.categories[c]?.shop;
    if (shop && (shop.generate?.count ?? 0) + shop.cards.length > 0)
      for (; have < d.others_listings_per_category; have++) addOtherListing(s, c, at);
  }
}

/** Fill hazard per day: base × exp(−sensitivity × (price/value − 1)); cheap listings sell fast. */
export function fillRatePerDay(
  priceCents: number,
  valueCents: number,
  base: number,
  sensitivity: number,
): number {
  if (valueCents <= 0) return 0;
  return base * Math.exp(-sensitivity * (priceCents / valueCents - 1));
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
    if (s.dyn.next() >= 1 - Math.exp(-rate * dtDays)) continue;
    s.inv.listings.delete(slot);
    if (l.seller !== null) {
      record(s, l.seller, at, 'listing_sale', l.priceCents, l.id);
      const fee = applyRate(l.priceCents, s.world.rules.seller_fee_rate);
      if (fee > 0) record(s, l.seller, at, 'seller_fee', -fee, l.id);
    }
    c.listing = null;
    c.loc = 'gone';
    c.owner = null;
  }
}
