/**
 * The inventory: every card exists once, as a CardRec in one location. Pools (packs with bands of
 * depletable cards), the shop and listings are indexes over those records. Values are integer
 * cents. A pool card's value is fixed; once it leaves the pool it follows its category's drift index.
 */
import { CATEGORIES, type Category, RISK_LEVELS, type RiskLevel } from '../api/schemas.js';
import type { Cents } from '../core/money.js';
import { groupThousands, roundHalfAway, toCents } from '../core/money.js';
import { Rng } from '../core/prng.js';
import { liveOdds, pastChase, pickWeighted, pullEv, pullsChase } from '../strategy/market-laws.js';
import { CARD_NAMES, GRADERS, SEALED_NAMES, SET_NAMES } from './names.js';
import { UniformBag } from './sampler.js';
import type { BandSpec, CardSpec, PackSpec, World } from './world-schema.js';

export type CardLocation =
  | 'pool' // in a pack's band (or its chase slot)
  | 'shop'
  | 'listed' // listed on the marketplace by an account of the world
  | 'listed_other' // listed by a simulated other user
  | 'vault'
  | 'sealed' // a sealed pack held by an account (not in the vault endpoint)
  | 'sold_back'
  | 'shipped'
  | 'gone'; // taken by a simulated other user

export interface CardRec {
  slot: number;
  id: string;
  category: Category;
  kind: 'card' | 'sealed';
  name: string;
  set: string;
  gradingCompany: string;
  gradingRank: number;
  certNumber: string;
  imageUrl: string;
  /** Value when anchored; with anchorIndex 0 the value is fixed. */
  anchorCents: Cents;
  anchorIndex: number;
  loc: CardLocation;
  owner: string | null;
  /** Pool position while loc === 'pool' (band -1: the chase slot). */
  pool: number;
  band: number;
  /** The acquisition (pull or card purchase) that put the card with its current owner. */
  acquisition: string | null;
  listing: ListingRec | null;
  /** A shop card with its own price (world `shop.cards[].price`): that price at that value. */
  ownPrice?: { valueCents: Cents; priceCents: Cents };
}

export interface ListingRec {
  id: string;
  priceCents: Cents;
  title: string;
  seller: string | null; // account id, null for a simulated other user
  createdAt: number;
}

export interface BandState {
  spec: BandSpec;
  index: number;
  minCents: Cents;
  maxCents: Cents;
  weights: Record<RiskLevel, number>;
  bag: UniformBag;
  sumCents: number;
  initialCount: number;
  rarityTier: string;
  label: string;
}

export interface ChaseState {
  slot: number;
  probability: number;
  label: string;
  oddsLabel: string;
  endsAt: number | null;
  hit: boolean;
}

export interface PoolState {
  index: number;
  category: Category;
  spec: PackSpec;
  priceCents: Cents;
  bands: BandState[];
  chase: ChaseState | null;
  /** Each band's odds per risk level (`RISK_LEVELS` order, then band): `weights`, read without a key. */
  bandOdds: Float64Array;
  /** Per risk level, Σ of its row of `bandOdds` in band order: the total while no band is empty. */
  oddsTotal: Float64Array;
  /** Bands holding no card (kept by `putInBand` and `takeFromBand`). */
  emptyBands: number;
  /** `drawPull`'s band weights of the draw under way (one per band: no array per draw). */
  drawWeights: Float64Array;
}

export interface Inventory {
  /** By slot; a released slot is empty until a new card takes it (`free`). */
  cards: (CardRec | undefined)[];
  byId: Map<string, CardRec>;
  /** Released slots, reused by the next new cards: the slot space stays the size of the live stock. */
  free: number[];
  /**
   * Ids of released cards by the time they went, oldest first, kept `GONE_ID_MEMORY_MS`: a card
   * purchase naming one answers "no longer available" as for a card still on record, not 404.
   */
  goneIds: Map<string, number>;
  /** Cards released since the world was built. */
  releasedTotal: number;
  pools: PoolState[];
  poolByKey: Map<string, PoolState>;
  shop: Record<Category, Set<number>>;
  shopSpec: Record<Category, World['categories']['pokemon'] | undefined>;
  listings: Set<number>;
  /** Per-category value index (1 at start); drifts with the dynamics. */
  index: Record<Category, number>;
  /** Deterministic id and card generator. */
  gen: Rng;
}

const poolKey = (category: string, packType: string): string => `${category}\u0000${packType}`;

/** The pool of a pack that can be bought (undefined for unknown or unpurchasable packs). */
export function purchasablePool(inv: Inventory, category: Category, packType: string): PoolState | undefined {
  const p = inv.poolByKey.get(poolKey(category, packType));
  return p?.spec.purchasable ? p : undefined;
}

export function cardValue(inv: Inventory, c: CardRec): Cents {
  if (c.anchorIndex === 0) return c.anchorCents;
  return roundHalfAway((c.anchorCents * inv.index[c.category]) / c.anchorIndex);
}

/** Re-anchors a card leaving the pool/shop so it follows the drift from its current value. */
function anchor(inv: Inventory, c: CardRec): void {
  const v = cardValue(inv, c);
  c.anchorCents = v;
  c.anchorIndex = inv.index[c.category];
}

export function shopPrice(inv: Inventory, c: CardRec): Cents {
  const own = c.ownPrice;
  if (own) {
    if (own.valueCents <= 0) return own.priceCents;
    // Multiplied first: at the recorded value the price is the recorded one, to the cent.
    return roundHalfAway((cardValue(inv, c) * own.priceCents) / own.valueCents);
  }
  const markup = inv.shopSpec[c.category]?.shop.markup ?? 1.15;
  return roundHalfAway(cardValue(inv, c) * markup);
}

function drawValue(rng: Rng, minC: Cents, maxC: Cents, dist: 'uniform' | 'log_uniform'): Cents {
  if (maxC <= minC) return minC;
  if (dist === 'uniform' || minC <= 0) return minC + Math.round(rng.next() * (maxC - minC));
  const v = Math.exp(Math.log(minC) + rng.next() * (Math.log(maxC) - Math.log(minC)));
  return Math.min(maxC, Math.max(minC, Math.round(v)));
}

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)]!;
}

export function newCard(
  inv: Inventory,
  category: Category,
  kind: 'card' | 'sealed',
  valueCents: Cents,
  spec?: Partial<CardSpec>,
  rng: Rng = inv.gen,
): CardRec {
  const id = spec?.id ?? inv.gen.uuid();
  const name =
    spec?.name ??
    (kind === 'sealed'
      ? `${pick(rng, SET_NAMES[category])} ${pick(rng, SEALED_NAMES[category])}`
      : pick(rng, CARD_NAMES[category]));
  const c: CardRec = {
    slot: inv.free.pop() ?? inv.cards.length,
    id,
    category,
    kind,
    name,
    set: spec?.set ?? pick(rng, SET_NAMES[category]),
    gradingCompany: spec?.grading_company ?? pick(rng, GRADERS),
    gradingRank: spec?.grading_rank ?? 8 + rng.int(5) * 0.5,
    certNumber: spec?.cert_number ?? String(10_000_000 + rng.int(89_999_999)),
    imageUrl: spec?.image_url ?? `https://img.sim.packbot.invalid/${id}`,
    anchorCents: valueCents,
    anchorIndex: 0,
    loc: 'gone',
    owner: null,
    pool: -1,
    band: -1,
    acquisition: null,
    listing: null,
  };
  if (inv.byId.has(id)) throw new Error(`duplicate card id '${id}' in the world`);
  inv.cards[c.slot] = c;
  inv.byId.set(id, c);
  return c;
}

/**
 * How long the id of a released card is remembered. A client names a card it saw in the shop, a
 * listing or a pool within minutes; a day covers any retry. After that, such an id is unknown (404).
 */
const GONE_ID_MEMORY_MS = 86_400_000;

/**
 * A card taken by a simulated other user that no account ever held leaves the inventory: nothing
 * answers with it any more, and keeping it would grow the simulator by every card it ever made
 * (about 800 a day in the default world). Its slot is reused; its id is remembered for a day.
 * Cards an account held stay: their acquisitions still answer sell-back (`already_sold`, holder).
 */
export function releaseGone(inv: Inventory, c: CardRec, now: number): void {
  if (c.loc !== 'gone' || c.acquisition !== null || c.owner !== null || c.listing !== null) return;
  if (inv.cards[c.slot] !== c) return;
  inv.cards[c.slot] = undefined;
  inv.byId.delete(c.id);
  inv.free.push(c.slot);
  inv.releasedTotal++;
  if (c.kind === 'card') inv.goneIds.set(c.id, now);
}

/** Forgets released ids older than `GONE_ID_MEMORY_MS` (the map is in release order). */
export function forgetGoneIds(inv: Inventory, now: number): void {
  for (const [id, at] of inv.goneIds) {
    if (now - at < GONE_ID_MEMORY_MS) break;
    inv.goneIds.delete(id);
  }
}

function putInBand(_inv: Inventory, pool: PoolState, band: BandState, c: CardRec): void {
  c.loc = 'pool';
  c.owner = null;
  c.pool = pool.index;
  c.band = band.index;
  c.anchorIndex = 0;
  const before = band.bag.count;
  band.bag.add(c.slot);
  if (before === 0 && band.bag.count > 0) pool.emptyBands--;
  band.sumCents += c.anchorCents;
}

function takeFromBand(inv: Inventory, band: BandState, c: CardRec): void {
  const before = band.bag.count;
  band.bag.remove(c.slot);
  if (before > 0 && band.bag.count === 0) inv.pools[c.pool]!.emptyBands++;
  band.sumCents -= c.anchorCents;
  c.pool = -1;
  c.band = -1;
  anchor(inv, c);
}

/** A new card generated within a band's bounds (restock and world generation). */
export function generateBandCard(inv: Inventory, pool: PoolState, band: BandState, rng: Rng): CardRec {
  const dist = band.spec.generate?.distribution ?? 'log_uniform';
  const v = drawValue(rng, band.minCents, band.maxCents, dist);
  const names = band.spec.generate?.names;
  const spec: Partial<CardSpec> = {
    ...(names ? { name: pick(rng, names) } : {}),
    ...(band.spec.generate?.set ? { set: band.spec.generate.set } : {}),
  };
  const c = newCard(inv, pool.category, band.spec.is_consolation ? 'sealed' : 'card', v, spec, rng);
  putInBand(inv, pool, band, c);
  return c;
}

export function generateShopCard(inv: Inventory, category: Category, rng: Rng): CardRec | undefined {
  const spec = inv.shopSpec[category]?.shop;
  if (!spec) return undefined;
  const v = drawValue(
    rng,
    toCents(spec.min_value),
    toCents(spec.max_value),
    spec.generate?.distribution ?? 'log_uniform',
  );
  const names = spec.generate?.names;
  const c = newCard(inv, category, 'card', v, names ? { name: pick(rng, names) } : {}, rng);
  c.anchorIndex = inv.index[category];
  c.loc = 'shop';
  inv.shop[category].add(c.slot);
  return c;
}

export function buildInventory(world: World, seed: number): Inventory {
  const genSeed = world.seed ?? seed;
  const inv: Inventory = {
    cards: [],
    byId: new Map(),
    free: [],
    goneIds: new Map(),
    releasedTotal: 0,
    pools: [],
    poolByKey: new Map(),
    shop: Object.fromEntries(CATEGORIES.map((c) => [c, new Set<number>()])) as Record<Category, Set<number>>,
    shopSpec: Object.fromEntries(CATEGORIES.map((c) => [c, world.categories[c]])) as Inventory['shopSpec'],
    listings: new Set(),
    index: Object.fromEntries(CATEGORIES.map((c) => [c, 1])) as Record<Category, number>,
    gen: new Rng(genSeed ^ 0x5eed),
  };
  let salt = 1;
  for (const category of CATEGORIES) {
    const cat = world.categories[category];
    if (!cat) continue;
    for (const spec of cat.packs) {
      const pool: PoolState = {
        index: inv.pools.length,
        category,
        spec,
        priceCents: toCents(spec.price),
        bands: [],
        chase: null,
        bandOdds: new Float64Array(0),
        oddsTotal: new Float64Array(0),
        // Every band starts empty; its first card counts it out.
        emptyBands: spec.bands.length,
        drawWeights: new Float64Array(0),
      };
      inv.pools.push(pool);
      inv.poolByKey.set(poolKey(category, spec.pack_type), pool);
      spec.bands.forEach((b, i) => {
        const minCents = toCents(b.min_value);
        const maxCents = toCents(b.max_value);
        const band: BandState = {
          spec: b,
          index: i,
          minCents,
          maxCents,
          weights: Object.fromEntries(
            RISK_LEVELS.map((r) => [r, spec.risk_levels.includes(r) ? (b.odds[r] ?? 0) : 0]),
          ) as Record<RiskLevel, number>,
          bag: new UniformBag(64),
          sumCents: 0,
          initialCount: 0,
          rarityTier: b.rarity_tier ?? b.bucket_id,
          label: b.label ?? `$${b.min_value}-$${b.max_value}`,
        };
        pool.bands.push(band);
        for (const cs of b.cards) {
          const c = newCard(inv, category, b.is_consolation ? 'sealed' : 'card', toCents(cs.value), cs);
          putInBand(inv, pool, band, c);
        }
        if (b.generate) {
          const rng = new Rng((b.generate.seed ?? genSeed) ^ Math.imul(salt++, 0x9e3779b1));
          for (let k = 0; k < b.generate.count; k++) generateBandCard(inv, pool, band, rng);
        }
        band.initialCount = band.bag.count;
      });
      setDrawTables(pool);
      if (spec.chase) {
        const c = newCard(inv, category, 'card', toCents(spec.chase.card.value), spec.chase.card);
        c.loc = 'pool';
        c.pool = pool.index;
        pool.chase = {
          slot: c.slot,
          probability: spec.chase.probability,
          label: spec.chase.label,
          oddsLabel:
            spec.chase.odds_label ??
            (spec.chase.probability > 0
              ? `1 in ${groupThousands(Math.round(1 / spec.chase.probability))}`
              : 'never'),
          endsAt: spec.chase.ends_at ? Date.parse(spec.chase.ends_at) : null,
          hit: false,
        };
      }
    }
    for (const cs of cat.shop.cards) {
      const c = newCard(inv, category, 'card', toCents(cs.value), cs);
      if (cs.price !== undefined)
        c.ownPrice = { valueCents: toCents(cs.value), priceCents: toCents(cs.price) };
      c.anchorIndex = 1;
      c.loc = 'shop';
      inv.shop[category].add(c.slot);
    }
    if (cat.shop.generate) {
      const rng = new Rng((cat.shop.generate.seed ?? genSeed) ^ Math.imul(salt++, 0x9e3779b1));
      for (let k = 0; k < cat.shop.generate.count; k++) generateShopCard(inv, category, rng);
    }
  }
  return inv;
}

// ---------- the pricing model (DESIGN.md), shared by draws and the pool's expected_value ----------

export function chaseActive(pool: PoolState, now: number): boolean {
  const ch = pool.chase;
  return ch !== null && !ch.hit && ch.probability > 0 && (ch.endsAt === null || now < ch.endsAt);
}

/** A risk level's row in `PoolState.bandOdds` and `oddsTotal` (its place in `RISK_LEVELS`). */
const RISK_ROW: Partial<Record<string, number>> = Object.fromEntries(RISK_LEVELS.map((r, k) => [r, k]));

/**
 * `drawPull`'s tables of a pool, from its bands: the odds per risk level, their totals and the
 * empty bands (built with the pool; a state saved before they existed gets them on restore).
 */
export function setDrawTables(pool: PoolState): void {
  const n = pool.bands.length;
  pool.bandOdds = new Float64Array(RISK_LEVELS.length * n);
  pool.oddsTotal = new Float64Array(RISK_LEVELS.length);
  pool.drawWeights = new Float64Array(n);
  pool.emptyBands = 0;
  RISK_LEVELS.forEach((r, k) => {
    let total = 0;
    for (let i = 0; i < n; i++) {
      const odds = pool.bands[i]!.weights[r];
      pool.bandOdds[k * n + i] = odds;
      total += odds;
    }
    pool.oddsTotal[k] = total;
  });
  for (const b of pool.bands) if (b.bag.count === 0) pool.emptyBands++;
}

/** Effective weight of a band at a risk level: its odds, or 0 once it has no cards (`liveOdds`). */
export function bandWeight(band: BandState, risk: RiskLevel): number {
  return liveOdds(band.weights[risk], band.bag.count);
}

export function totalWeight(pool: PoolState, risk: RiskLevel): number {
  let t = 0;
  for (const b of pool.bands) t += bandWeight(b, risk);
  return t;
}

/** Whether a pull can be drawn at all right now (at any of the pack's risk levels). */
export function drawable(pool: PoolState, now: number): boolean {
  if (chaseActive(pool, now)) return true;
  return pool.spec.risk_levels.some((r) => totalWeight(pool, r) > 0);
}

/** EV of one pack, in (fractional) cents: the pricing model's `pullEv` over the pool now. */
export function expectedValueCents(inv: Inventory, pool: PoolState, risk: RiskLevel, now: number): number {
  const p = chaseActive(pool, now) ? pool.chase!.probability : 0;
  const chaseValue = p > 0 ? cardValue(inv, inv.cards[pool.chase!.slot]!) : 0;
  const bands = pool.bands;
  return pullEv(
    p,
    chaseValue,
    bands.map((b) => b.weights[risk]),
    bands.map((b) => b.bag.count),
    bands.map((b) => b.sumCents),
  );
}

export interface Draw {
  slot: number;
  /** Band index, -1 for the chase. */
  band: number;
  /** The band's renormalised odds (or the chase probability) at the time of the draw. */
  odds: number;
}

/** A `Draw` for `drawPull` to write (a caller drawing many pulls in turn keeps one). */
export const newDraw = (): Draw => ({ slot: -1, band: -1, odds: 0 });

/**
 * One pull into `out`: the chase with its probability, else a band by renormalised odds, then a
 * card uniformly within the band. Removes the card from the pool. Returns false (`out` as it
 * was) when nothing is left. The caller owns `out`: no object is made per pull.
 */
export function drawPull(
  inv: Inventory,
  pool: PoolState,
  risk: RiskLevel,
  now: number,
  rng: Rng,
  out: Draw,
): boolean {
  // The band's uniform: with an active chase, what is left of the chase's (no second number).
  let u = -1;
  if (chaseActive(pool, now)) {
    const ch = pool.chase!;
    u = rng.next();
    if (pullsChase(u, ch.probability)) {
      ch.hit = true;
      const c = inv.cards[ch.slot]!;
      c.pool = -1;
      anchor(inv, c);
      out.slot = ch.slot;
      out.band = -1;
      out.odds = ch.probability;
      return true;
    }
    u = pastChase(u, ch.probability);
  }
  const bands = pool.bands;
  const n = bands.length;
  // The risk level's row of odds (a level the pack does not know has none: nothing to draw).
  const k = RISK_ROW[risk];
  if (typeof k !== 'number') return false;
  // No band empty: the live odds are the odds row itself, and its total is kept.
  let weights = pool.bandOdds;
  let base = k * n;
  let t = pool.oddsTotal[k]!;
  if (pool.emptyBands > 0) {
    // Some band is empty: the live odds (0 for it) and their total, summed in band order.
    const odds = weights;
    weights = pool.drawWeights;
    t = 0;
    for (let i = 0; i < n; i++) {
      const w = liveOdds(odds[base + i]!, bands[i]!.bag.count);
      weights[i] = w;
      t += w;
    }
    base = 0;
  }
  if (!(t > 0)) return false;
  if (u < 0) u = rng.next();
  const i = pickWeighted(u * t, weights, base, n);
  const band = bands[i]!;
  const slot = band.bag.pick(rng);
  takeFromBand(inv, band, inv.cards[slot]!);
  out.slot = slot;
  out.band = i;
  out.odds = weights[base + i]! / t;
  return true;
}

/** Puts a drawn card back exactly where it was (an order that failed as a whole). */
export function undoDraw(inv: Inventory, pool: PoolState, d: Draw): void {
  const c = inv.cards[d.slot]!;
  if (d.band < 0) {
    pool.chase!.hit = false;
    c.loc = 'pool';
    c.pool = pool.index;
    c.anchorIndex = 0;
    return;
  }
  putInBand(inv, pool, pool.bands[d.band]!, c);
}
