/**
 * The dynamic market, per path: the snapshot's packs with depletable bands (our pulls and other
 * users' openings take cards; restock refills bands towards their recorded size), a chase that is
 * gone once hit, category value indexes drifting on the world's tick, and the simulator's own
 * listing fill model. Rates default to the world schema's `dynamics` (what `packbot sim` runs).
 * Pools are rescored from their current contents only when they changed and at most every
 * `rescore_minutes`, like a bot that refreshes its catalog a few times an hour.
 */
import { type Band, CATEGORIES, type PackPool, type PoolCard } from '../api/schemas.js';
import { DAY_MS, HOUR_MS } from '../core/clock.js';
import { applyRate, roundHalfAway, toCents } from '../core/money.js';
import { Rng } from '../core/prng.js';
import { type Dynamics, DynamicsSpec, type Rules, RulesSpec } from '../market/world-schema.js';
import { decideListing, type KeepRange, keepRange, type ListingView } from '../strategy/decide-listing.js';
import { IncrementalScorer } from '../strategy/incremental-score.js';
import {
  bandGap,
  fillRatePerDay,
  freshEnds,
  indexFactor,
  lockEnds,
  othersRiskShare,
  pickByGap,
  pickEqual,
  pickRunning,
  poissonCount,
  pullsChase,
  refillCount,
  refillShare,
  runningLiveOdds,
  sellBackAmount,
  valueStep,
} from '../strategy/market-laws.js';
import { excludedBy, type ScoreContext, type ScoreRow } from '../strategy/score.js';
import type { BacktestModel } from './model.js';
import type { DrawParts, Listing, PathMarket, ShopMarket, ShopOffer } from './path-market.js';
import { addDrawn, clearDrawParts } from './path-model.js';
import { boughtSellBack, type CardsSetup, DEFAULT_CARD_SYNC_MINUTES, Shop } from './shop.js';
import { valueGrid } from './value-grid.js';

export type DynamicsInput = Partial<Dynamics> & { rescore_minutes?: number; card_sync_minutes?: number };

/** The API's categories, in the order their value indexes draw their moves each tick. */
const CATEGORY_SLOT = new Map<string, number>(CATEGORIES.map((c, i) => [c, i]));

/** Slot of a category the world does not move (its value index stays 1). */
const NO_CATEGORY = -1;
/** A pool of no pack, a band that is none (no live band; a chase pull), a risk level that is none. */
const NO_PACK = -1;
const NO_BAND = -1;
const NO_RISK_LEVEL = -1;
/** The id stored for a card of an ignored pack (which keeps counts, not cards) and for the chase. */
const NO_CARD = -1;
/** `drawBand`'s answers besides a band (≥ 0): the chase was pulled, nothing can be drawn. */
const DRAW_CHASE = -1;
const DRAW_NOTHING = -2;
/** `open`'s answer when the order fails (PathMarket's contract). */
const ORDER_FAILED = -1;
/** `indexTicks` before any tick of the value drift is drawn. */
const NO_TICK_DRAWN = -1;

/** Salts of the world's two random streams, apart from the path's own and from each other. */
const WORLD_STREAM_SALT = 0x6d2b79f5;
const DRIFT_STREAM_SALT = 0x2545f491;
/** Rescore interval when `rescore_minutes` is not given. */
const DEFAULT_RESCORE_MINUTES = 240;
/** A pack is rescored when its quick EV moves by more than this share of the last one (taken as ≥ 1 cent). */
const RESCORE_EV_MOVE = 0.005;
/** `stillBelow`'s margin: a mean this close under the threshold is rescored to be sure. */
const STILL_BELOW_MARGIN = 1e-6;
/** Decisions tried at one look at a listing before giving up until the next tick. */
const DECISIONS_PER_LOOK = 4;

interface BandTemplate {
  band: Band;
  minCents: number;
  maxCents: number;
  sealed: boolean;
  odds: Map<string, number>;
  cards: PoolCard[];
  /** Recorded size: listed cards plus unseen ones (hittable_cards beyond the listed). */
  size: number;
}

interface PackTemplate {
  category: string;
  packType: string;
  bands: BandTemplate[];
  chase: PackPool['chase'];
  /** Model pool index for each risk level of this pack, and the body recorded for it. */
  pools: { index: number; risk: string; body: PackPool }[];
}

/** The pool a risk level's scorer stands for: its recorded body with the pack's merged bands. */
function scorerTemplate(t: PackTemplate, x: PackTemplate['pools'][number]): PackPool {
  return {
    ...x.body,
    bands: t.bands.map((b) => ({ ...b.band, odds: b.odds.get(x.risk) ?? 0 })),
    cards: [],
    total_cards: 0,
  };
}

const templates = new WeakMap<BacktestModel, PackTemplate[]>();

function packTemplates(model: BacktestModel): PackTemplate[] {
  const cached = templates.get(model);
  if (cached) return cached;
  const byPack = new Map<string, PackTemplate>();
  for (const p of model.pools) {
    const k = `${p.category}/${p.packType}`;
    let t = byPack.get(k);
    if (!t) {
      t = { category: p.category, packType: p.packType, bands: [], chase: null, pools: [] };
      byPack.set(k, t);
    }
    t.pools.push({ index: p.index, risk: p.risk, body: p.body });
    if (!t.chase && p.body.chase) t.chase = p.body.chase;
    for (const b of p.body.bands) {
      let bt = t.bands.find((x) => x.band.bucket_id === b.bucket_id);
      if (!bt) {
        bt = {
          band: b,
          minCents: toCents(b.min_value),
          maxCents: toCents(b.max_value),
          sealed: b.is_consolation,
          odds: new Map(),
          cards: [],
          size: 0,
        };
        t.bands.push(bt);
      }
      bt.odds.set(p.risk, b.odds);
      const seen = new Set(bt.cards.map((c) => c.id));
      for (const c of p.body.cards) if (c.bucket_id === b.bucket_id && !seen.has(c.id)) bt.cards.push(c);
      bt.size = Math.max(bt.size, b.hittable_cards, bt.cards.length);
    }
  }
  const list = [...byPack.values()];
  templates.set(model, list);
  return list;
}

interface PackState {
  // Read by every world card change: first, so they share the object's first cache lines.
  /** The chase's probability (0 without one). */
  chaseP: number;
  /** Whether the chase was pulled (gone for everyone). */
  chaseHit: boolean;
  /** When the chase ends (ms; +∞ if never). */
  chaseEndsAt: number;
  /** Whether `cum`, `cumTotal` and the pack's `mixCum` must be rebuilt before a draw. */
  cumDirty: boolean;
  /** Other users' openings: total of `mixCum` (< 1 when a level is empty). */
  mixTotal: number;
  /**
   * The strategy excludes every risk level of the pack: its rows wait whatever it holds, so only
   * its band counts are kept (other users still open it while it has cards), not its cards.
   */
  ignored: boolean;
  /** Σ over bands of max(0, recorded size − cards): the restock gap, kept on every put/take. */
  gap: number;
  /** Cards in the pack, all bands. */
  cardCount: number;
  /** Cards taken or added since the pack was last scored. */
  changes: number;
  /** The pack's bands are the market's bands b0 … b0 + nb − 1 (see DynamicMarket's band arrays). */
  b0: number;
  nb: number;
  /** What the snapshot records of the pack. */
  t: PackTemplate;
  /** The pack's slices of the market's `count` and `esum` (for `realizedMeanOf`). */
  countView: Int32Array;
  esumView: Float64Array;
  /** Band odds per risk level (t.pools order), by band. */
  odds: Float64Array[];
  /** Per risk level: bands holding a card with odds > 0 (drawable without a scan). */
  live: Int32Array;
  /** Per risk level × band: running odds over bands holding cards; rebuilt when a band empties or refills. */
  cum: Float64Array;
  /** Per risk level: the total of its `cum`. */
  cumTotal: Float64Array;
  /** Position of the 'standard' risk level in t.pools (NO_RISK_LEVEL: none). */
  standard: number;
  /** Incremental scorers (one per distinct price), given the bands that changed when a row is needed (`sync`). */
  scorers: IncrementalScorer[];
  /** Per risk level: its scorer (index in `scorers`). */
  riskScorer: Int32Array;
  /** Per risk level: the pool its scorer stands for (`available` and `chase` set when scoring). */
  views: PackPool[];
  /** Whether the pack could be drawn at each of its risk levels when last scored. */
  wasDrawable: boolean;
  /** Rescore at the next look whatever the interval (an order of ours failed on this pack). */
  mustRescore: boolean;
  /** Per risk level: 1 if the strategy excludes it (its rows wait whatever the pool holds). */
  excluded: Uint8Array;
  /** Per risk level: its last row (null: nothing drawable; undefined: never scored). */
  riskRows: (ScoreRow | null | undefined)[];
  /** Per risk level: 1 if it was drawable when its row was made. */
  riskDrawable: Uint8Array;
  /** Expected pull value (summed over risk levels) when last scored. */
  scoredEv: number;
  /** The pack's rows as last scored (its risk levels' non-null rows). */
  rows: ScoreRow[];
}

/** A pack's constant parts, built once per model: paths start from them (fields as in PackState). */
interface PackStart {
  ignored: boolean;
  excluded: Uint8Array;
  b0: number;
  odds: Float64Array[];
  standard: number;
  views: PackPool[];
  /** The scorers holding the recorded cards: each path starts from clones of them. */
  scorers: IncrementalScorer[];
  riskScorer: Int32Array;
}

/**
 * The world's cards at the start of a path, every pack's bands in one set of arrays (band g of
 * the market is band g − b0 of its pack): one typed array per field for all packs keeps what every
 * card change reads in a few cache lines, where per-pack arrays spread it over hundreds.
 */
interface WorldStart extends WorldBands {
  packs: PackStart[];
}

/** WorldStart's typed arrays (a pack's blocks of them while it is built). */
interface WorldBands {
  /** Per band: its recorded size (what restock fills it back to). */
  size: Int32Array;
  /** Per band: where its cards start in `ids`, and their room there. */
  off: Int32Array;
  cap: Int32Array;
  /** Per band: 1 if its cards are sealed packs (the consolation band). */
  sealed: Uint8Array;
  /**
   * Per band: where its values start in `idTerms`, whose entries 2·(valOff + id) and the next hold
   * the value (cents) and the expected realised value of value id `id` (one cache line per card
   * change). Ids are the same in every scorer of a pack.
   */
  valOff: Int32Array;
  idTerms: Float64Array;
  /** Per band: the ids a generated card can take (its value grid): `gridId[gridOff + k]`, k < `gridLen`. */
  gridOff: Int32Array;
  gridLen: Int32Array;
  gridId: Int32Array;
  /** The recorded cards: ids by position, and per band count, Σ value, Σ expected realised value. */
  ids: Int32Array;
  count: Int32Array;
  sum: Float64Array;
  esum: Float64Array;
}

/** Each field of the packs' blocks, concatenated in pack order (a missing field fails every path at once). */
function concatBands(blocks: WorldBands[]): WorldBands {
  const out: Partial<Record<keyof WorldBands, Int32Array | Float64Array | Uint8Array>> = {};
  for (const key of BAND_FIELDS) {
    const parts = blocks.map((b) => b[key]);
    let n = 0;
    for (const x of parts) n += x.length;
    const Make = (parts[0]?.constructor ?? Int32Array) as new (
      n: number,
    ) => Int32Array | Float64Array | Uint8Array;
    const all = new Make(n);
    let at = 0;
    for (const x of parts) {
      all.set(x, at);
      at += x.length;
    }
    out[key] = all;
  }
  return out as WorldBands;
}

/** Start of each of consecutive blocks of the given lengths in one array. */
function offsets(lengths: Int32Array): Int32Array {
  const off = new Int32Array(lengths.length);
  for (let i = 1; i < lengths.length; i++) off[i] = off[i - 1]! + lengths[i - 1]!;
  return off;
}

function total(lengths: Int32Array): number {
  let n = 0;
  for (let i = 0; i < lengths.length; i++) n += lengths[i]!;
  return n;
}

const BAND_FIELDS = [
  'size',
  'off',
  'cap',
  'sealed',
  'valOff',
  'idTerms',
  'gridOff',
  'gridLen',
  'gridId',
  'ids',
  'count',
  'sum',
  'esum',
] as const satisfies readonly (keyof WorldBands)[];

const starts = new WeakMap<BacktestModel, WorldStart>();

function worldStart(model: BacktestModel): WorldStart {
  const cached = starts.get(model);
  if (cached) return cached;
  const blocks: WorldBands[] = [];
  // Running bases of the pack's blocks in the concatenated arrays.
  let bands = 0;
  let cards = 0;
  let values = 0;
  let gridPoints = 0;
  const packs = packTemplates(model).map((t): PackStart => {
    const { scorers, riskScorer } = packScorers(t, model.strategy);
    const block = packBands(t, scorers);
    // The block's offsets count from the pack's start: moved to where it lands in the world's arrays.
    blocks.push({
      ...block,
      off: block.off.map((o) => o + cards),
      valOff: block.valOff.map((o) => o + values),
      gridOff: block.gridOff.map((o) => o + gridPoints),
    });
    const b0 = bands;
    bands += t.bands.length;
    cards += block.ids.length;
    values += block.idTerms.length / 2;
    gridPoints += block.gridId.length;
    const excluded = Uint8Array.from(t.pools, (x) => (excludedBy(x.body, model.strategy) !== null ? 1 : 0));
    return {
      ignored: excluded.every((x) => x === 1),
      excluded,
      b0,
      odds: t.pools.map((x) => Float64Array.from(t.bands, (b) => b.odds.get(x.risk) ?? 0)),
      standard: t.pools.findIndex((x) => x.risk === 'standard'),
      views: t.pools.map((x) => scorerTemplate(t, x)),
      scorers,
      riskScorer,
    };
  });
  const start: WorldStart = { packs, ...concatBands(blocks) };
  starts.set(model, start);
  return start;
}

/** A pack's scorers, one per distinct price, and each risk level's (index in `scorers`). */
function packScorers(
  t: PackTemplate,
  strategy: BacktestModel['strategy'],
): { scorers: IncrementalScorer[]; riskScorer: Int32Array } {
  const prices: number[] = [];
  const scorers: IncrementalScorer[] = [];
  const riskScorer = new Int32Array(t.pools.length);
  t.pools.forEach((x, r) => {
    const price = toCents(x.body.price);
    let i = prices.indexOf(price);
    if (i < 0) {
      i = prices.length;
      prices.push(price);
      scorers.push(new IncrementalScorer(scorerTemplate(t, x), strategy));
    }
    riskScorer[r] = i;
  });
  return { scorers, riskScorer };
}

/**
 * A pack's block of the world's band arrays (offsets from the pack's start): its recorded cards,
 * also added to its scorers, and its value grids, each value given its id in the scorers.
 */
function packBands(t: PackTemplate, scorers: IncrementalScorer[]): WorldBands {
  const nb = t.bands.length;
  const count = new Int32Array(nb);
  const sum = new Float64Array(nb);
  const esum = new Float64Array(nb);
  // Ids are handed out in first-seen order per band and every scorer is fed the same values in
  // the same order, so a value has the same id in each: one id per card serves them all.
  const byId: number[][] = t.bands.map(() => []);
  const idOf = (bi: number, v: number): number => {
    const id = scorers[0]!.valueId(bi, v);
    for (let i = 1; i < scorers.length; i++)
      if (scorers[i]!.valueId(bi, v) !== id) throw new Error('scorers of one pack disagree on value ids');
    byId[bi]![id] = v;
    return id;
  };
  const cap = Int32Array.from(t.bands, (b) => Math.max(1, b.size, b.cards.length));
  const off = offsets(cap);
  const ids = new Int32Array(total(cap));
  t.bands.forEach((bt, bi) => {
    for (const c of bt.cards) {
      const v = toCents(c.market_value);
      const id = idOf(bi, v);
      for (const s of scorers) s.addId(bi, id);
      ids[off[bi]! + count[bi]!] = id;
      count[bi] = count[bi]! + 1;
      sum[bi] = sum[bi]! + v;
      esum[bi] = esum[bi]! + scorers[0]!.expectedOf(bi, id);
    }
  });
  const grids = t.bands.map((bt) => valueGrid(bt.minCents, bt.maxCents));
  const gridLen = Int32Array.from(grids, (g) => g.length);
  const gridOff = offsets(gridLen);
  const gridId = new Int32Array(total(gridLen));
  grids.forEach((g, bi) => {
    for (let k = 0; k < g.length; k++) gridId[gridOff[bi]! + k] = idOf(bi, g[k]!);
  });
  const valLen = Int32Array.from(byId, (x) => x.length);
  const valOff = offsets(valLen);
  const idTerms = new Float64Array(2 * total(valLen));
  byId.forEach((x, bi) => {
    for (let id = 0; id < x.length; id++) {
      idTerms[2 * (valOff[bi]! + id)] = x[id]!;
      idTerms[2 * (valOff[bi]! + id) + 1] = scorers[0]!.expectedOf(bi, id);
    }
  });
  return {
    size: Int32Array.from(t.bands, (b) => b.size),
    off,
    cap,
    sealed: Uint8Array.from(t.bands, (b) => (b.sealed ? 1 : 0)),
    valOff,
    idTerms,
    gridOff,
    gridLen,
    gridId,
    ids,
    count,
    sum,
    esum,
  };
}

interface Settings {
  dyn: Dynamics;
  rules: Rules;
  rescoreMs: number;
  cardSyncMs: number;
}

const settingsCache = new WeakMap<DynamicsInput, Settings>();
const NO_OVERRIDES: DynamicsInput = {};

/** Rates validated once per overrides object, not per path (validation is costly). */
function settingsFor(overrides: DynamicsInput): Settings {
  const cached = settingsCache.get(overrides);
  if (cached) return cached;
  const { rescore_minutes, card_sync_minutes, ...rates } = overrides;
  const s = {
    dyn: DynamicsSpec.parse(rates),
    rules: RulesSpec.parse({}),
    rescoreMs: (rescore_minutes ?? DEFAULT_RESCORE_MINUTES) * 60_000,
    cardSyncMs: Math.max(1, card_sync_minutes ?? DEFAULT_CARD_SYNC_MINUTES) * 60_000,
  };
  settingsCache.set(overrides, s);
  return s;
}

export class DynamicMarket implements PathMarket {
  /** The world's rates (the validated `dynamics`). */
  private readonly dyn: Dynamics;
  /** The API's money rules (seller fee, sell-back rates). */
  private readonly rules: Rules;
  /** Least time between two rescores of a pack (`rescore_minutes`). */
  private readonly rescoreMs: number;
  /** The world's draws: other users' openings, arrivals, refills, generated cards' values. */
  private readonly rng: Rng;
  /** The value drift's draws (their own stream: drawing ahead shifts no other draw). */
  private readonly driftRng: Rng;
  /** The path's start (ms): tick k is at start + k · tickMs. */
  private readonly start: number;
  /** The world's tick (ms). */
  private readonly tickMs: number;
  /** When the next tick is due (ms). */
  private nextTick: number;
  /** Every pack's state, in `packTemplates` order. */
  private readonly packs: PackState[];
  /** Model pool index → pack (NO_PACK: none), and position of its risk level in the pack's pools. */
  private readonly poolPack: Int32Array;
  private readonly poolRisk: Int32Array;
  /** Model pool index → its category's position in CATEGORY_SLOT (NO_CATEGORY: none). */
  private readonly poolCategory: Int32Array;
  /** Category value indexes after the last tick (they start at 1), by position in CATEGORY_SLOT. */
  private readonly index = new Float64Array(CATEGORY_SLOT.size).fill(1);
  /**
   * The indexes after each tick (tick k at `indexPath[k · categories + c]`, tick 0 the start),
   * drawn ahead from their own stream: a listing looks ahead to the tick where its value leaves
   * the range its decision holds over, or where it sells, instead of being stepped every tick.
   */
  private indexPath = new Float64Array(0);
  /** The last tick drawn into `indexPath` (NO_TICK_DRAWN: none). */
  private indexTicks = NO_TICK_DRAWN;
  /** The rows last returned by `rows`, and when the last rescore interval began. */
  private rowsCache: readonly ScoreRow[] | null = null;
  private rowsAt = Number.NEGATIVE_INFINITY;
  /** Rescore at the next `rows` whatever the interval (a pack emptied, an order was refunded). */
  private forceRescore = true;
  /**
   * Packs open to other users (indexes into `packs`, the first `openCount`), in pack order, and
   * until when they hold: recomputed only when a band empties or refills, a chase is hit (or given
   * back), or a chase's end time passes — the only ways the list can change.
   */
  private openList = new Int32Array(0);
  private openCount = 0;
  private openDirty = true;
  private openValidUntil = Number.NEGATIVE_INFINITY;
  /**
   * Scratch objects reused by every call (no allocation per order or listing): `open`'s pulls so
   * far as (id, band) pairs, to put back if the order fails (band NO_BAND: the chase); `resolve`'s keep range and the
   * listing as `decideListing` sees it.
   */
  private readonly undo: number[] = [];
  private readonly keep: KeepRange = { lo: 0, hi: 0, until: 0 };
  private readonly listingView: ListingView = {
    priceCents: 0,
    listedAt: 0,
    marketValueCents: 0,
    basisValueCents: 0,
    lockedValueUntil: 0,
  };
  // Every pack's bands, one entry per band of all packs (pack p's at p.b0 … p.b0 + p.nb − 1, see
  // WorldStart). This path's own, changed by card changes:
  /** Per band: its number of cards. */
  private readonly count: Int32Array;
  /** Per band: Σ value (cents, exact integers: the band mean without a scan). */
  private readonly sum: Float64Array;
  /** Per band: running Σ expected realised value. */
  private readonly esum: Float64Array;
  /** Per band: a change counter, and its value when the scorers last had the band (`sync`). */
  private readonly ver: Int32Array;
  private readonly synced: Int32Array;
  /** Per band: other users' running P(band) over the pack's bands (`rebuildCum`). */
  private readonly mixCum: Float64Array;
  /** The cards: value ids by position, band g's from `off[g]`. */
  private readonly ids: Int32Array;
  // Shared by a worker's paths, never written (WorldBands says what each holds):
  private readonly size: Int32Array;
  private readonly off: Int32Array;
  private readonly cap: Int32Array;
  private readonly sealed: Uint8Array;
  private readonly valOff: Int32Array;
  private readonly idTerms: Float64Array;
  private readonly gridOff: Int32Array;
  private readonly gridLen: Int32Array;
  private readonly gridId: Int32Array;
  /** The shop (cards enabled and recorded; see shop.ts), and its side of PathMarket. */
  private readonly shopWorld: Shop | null = null;
  readonly shop: ShopMarket | null = null;

  constructor(
    private readonly model: BacktestModel,
    seed: number,
    pathIndex: number,
    overrides: DynamicsInput = NO_OVERRIDES,
    cards: CardsSetup | null = null,
  ) {
    const settings = settingsFor(overrides);
    this.dyn = settings.dyn;
    this.rules = settings.rules;
    this.rescoreMs = settings.rescoreMs;
    // The world's own stream: separate from the path's draws so one cannot shift the other.
    this.rng = new Rng((seed ^ WORLD_STREAM_SALT) >>> 0).fork(pathIndex);
    this.driftRng = new Rng((seed ^ DRIFT_STREAM_SALT) >>> 0).fork(pathIndex);
    const tpl = packTemplates(model);
    const w = worldStart(model);
    this.count = w.count.slice();
    this.sum = w.sum.slice();
    this.esum = w.esum.slice();
    // Versions start ahead of what the scorers have: every band is handed over at its first row.
    this.ver = new Int32Array(w.count.length).fill(1);
    this.synced = new Int32Array(w.count.length);
    this.mixCum = new Float64Array(w.count.length);
    this.ids = w.ids.slice();
    this.size = w.size;
    this.off = w.off;
    this.cap = w.cap;
    this.sealed = w.sealed;
    this.valOff = w.valOff;
    this.idTerms = w.idTerms;
    this.gridOff = w.gridOff;
    this.gridLen = w.gridLen;
    this.gridId = w.gridId;
    this.poolCategory = Int32Array.from(model.pools, (p) => CATEGORY_SLOT.get(p.category) ?? NO_CATEGORY);
    this.poolPack = new Int32Array(model.pools.length).fill(NO_PACK);
    this.poolRisk = new Int32Array(model.pools.length).fill(NO_RISK_LEVEL);
    this.packs = tpl.map((t, pi) => {
      t.pools.forEach((p, r) => {
        this.poolPack[p.index] = pi;
        this.poolRisk[p.index] = r;
      });
      return this.startPack(t, w.packs[pi]!);
    });
    this.start = model.startMs;
    this.tickMs = this.dyn.tick_seconds * 1000;
    this.nextTick = this.start + this.tickMs;
    if (cards?.backtested) {
      const shop = new Shop(model.snapshot, model.strategy, this.dyn, this.index, slotOf, seed, pathIndex);
      this.shopWorld = shop;
      this.shop = {
        syncMs: settings.cardSyncMs,
        feeCents: toCents(this.rules.card_fee),
        dailyCountCap: this.rules.card_daily_count_cap,
        dailySpendCapCents: toCents(this.rules.card_daily_spend_cap),
        sellBackNow: (basis: number, value: number, at: number) =>
          boughtSellBack(at, basis, value, this.rules),
        offers: () => shop.offers(),
        buy: (offer: ShopOffer) => shop.buy(offer),
        listCard: (l: Listing, now: number) => this.list(l, now, shop.rng),
        anchor: (l: Listing) => {
          l.anchorIndex = this.indexOf(l);
        },
        valueNow: (l: Listing) => this.valueNow(l),
      };
    }
  }

  /** The shop on this path (tests read its stock); null when cards are not backtested. */
  get shopState(): Shop | null {
    return this.shopWorld;
  }

  /** Pack t's state at the start of a path: its recorded cards, and its truncated bands filled. */
  private startPack(t: PackTemplate, st: PackStart): PackState {
    const nb = t.bands.length;
    const p: PackState = {
      chaseP: t.chase ? t.chase.probability : 0,
      chaseHit: false,
      chaseEndsAt: t.chase?.ends_at ? Date.parse(t.chase.ends_at) : Number.POSITIVE_INFINITY,
      cumDirty: true,
      mixTotal: 0,
      ignored: st.ignored,
      gap: 0,
      cardCount: 0,
      changes: 1,
      b0: st.b0,
      nb,
      t,
      countView: this.count.subarray(st.b0, st.b0 + nb),
      esumView: this.esum.subarray(st.b0, st.b0 + nb),
      odds: st.odds,
      live: new Int32Array(t.pools.length),
      cum: new Float64Array(t.pools.length * nb),
      cumTotal: new Float64Array(t.pools.length),
      standard: st.standard,
      scorers: st.scorers.map((s) => {
        const c = s.clone();
        // decideOpen never reads a row's growth: only the decision computes it (same decisions).
        c.growthOnDemand = false;
        return c;
      }),
      riskScorer: st.riskScorer,
      // Shared by the worker's paths, which run one after the other: `available` and `chase` are
      // set before every read.
      views: st.views,
      wasDrawable: true,
      mustRescore: false,
      excluded: st.excluded,
      riskRows: t.pools.map(() => undefined),
      riskDrawable: new Uint8Array(t.pools.length),
      scoredEv: 0,
      rows: [],
    };
    for (let bi = 0; bi < nb; bi++) {
      const g = p.b0 + bi;
      if (this.count[g]! > 0) this.liveChange(p, bi, 1);
      // Unseen cards of a truncated band: values drawn within its bounds, as the simulator does.
      for (let k = this.count[g]!; k < this.size[g]!; k++) this.newCard(p, bi);
    }
    p.gap = 0;
    for (let g = p.b0; g < p.b0 + nb; g++) {
      p.cardCount += this.count[g]!;
      p.gap += Math.max(0, this.size[g]! - this.count[g]!);
    }
    return p;
  }

  /** Category c's value index after tick k (drawn ahead as far as asked, a day at a time). */
  private indexAt(k: number, c: number): number {
    if (k > this.indexTicks) this.drawIndexes(k);
    return this.indexPath[k * CATEGORY_SLOT.size + c]!;
  }

  /** Value drift up to tick `k` at least: log-normal steps with the world's trend and volatility. */
  private drawIndexes(k: number): void {
    const nc = CATEGORY_SLOT.size;
    const perDay = Math.max(1, Math.round(DAY_MS / this.tickMs));
    const upTo = Math.max(k, this.indexTicks + perDay);
    let path = this.indexPath;
    if ((upTo + 1) * nc > path.length) {
      // Room doubles (a long backtest copies the path a few times, not once a day).
      path = new Float64Array(Math.max((upTo + 1) * nc, 2 * path.length));
      if (this.indexTicks >= 0) path.set(this.indexPath.subarray(0, (this.indexTicks + 1) * nc));
    }
    if (this.indexTicks === NO_TICK_DRAWN) {
      path.fill(1, 0, nc);
      this.indexTicks = 0;
    }
    const step = valueStep(this.dyn.value_daily_trend, this.dyn.value_daily_volatility, this.tickMs / DAY_MS);
    // The normals first, in the array's new part, then turned into the indexes in place.
    const from = (this.indexTicks + 1) * nc;
    const to = (upTo + 1) * nc;
    this.driftRng.normals(path, from, to);
    for (let i = from; i < to; i++) path[i] = path[i - nc]! * indexFactor(step, path[i]!);
    this.indexPath = path;
    this.indexTicks = upTo;
  }

  /** A new card in band bi of pack p, its value drawn uniformly from the band's value grid. */
  private newCard(p: PackState, bi: number): void {
    const g = p.b0 + bi;
    // An ignored pack keeps no cards: no value is drawn for it.
    this.put(p, bi, p.ignored ? NO_CARD : this.gridId[this.gridOff[g]! + this.rng.int(this.gridLen[g]!)]!);
  }

  /** Per risk level: running odds of the bands holding cards, their total and the last such band. */
  private rebuildCum(p: PackState): void {
    const nb = p.nb;
    const count = this.count;
    const b0 = p.b0;
    for (let r = 0; r < p.odds.length; r++) {
      const odds = p.odds[r]!;
      p.cumTotal[r] = runningLiveOdds(odds, count, b0, nb, p.cum, r * nb);
    }
    // Other users' mixture: P(risk level) × its band odds among live bands.
    const nr = p.odds.length;
    const mix = this.mixCum;
    mix.fill(0, b0, b0 + nb);
    for (let r = 0; r < nr; r++) {
      const total = p.cumTotal[r]!;
      if (!(total > 0)) continue;
      const pr = othersRiskShare(r, nr, p.standard);
      const odds = p.odds[r]!;
      for (let i = 0; i < nb; i++)
        if (count[b0 + i]! > 0 && odds[i]! > 0) mix[b0 + i] = mix[b0 + i]! + (pr * odds[i]!) / total;
    }
    let acc = 0;
    for (let i = 0; i < nb; i++) {
      acc += mix[b0 + i]!;
      mix[b0 + i] = acc;
    }
    p.mixTotal = acc;
    p.cumDirty = false;
  }

  /** Band bi of pack p went from empty to not (+1) or back (−1). */
  private liveChange(p: PackState, bi: number, d: number): void {
    this.openDirty = true;
    p.cumDirty = true;
    for (let r = 0; r < p.odds.length; r++) if (p.odds[r]![bi]! > 0) p.live[r] = p.live[r]! + d;
  }

  /** The card with value id `id` enters band `bi` of pack p (at its last position; counted only in an ignored pack). */
  private put(p: PackState, bi: number, id: number): void {
    if (p.ignored) {
      this.counted(p, bi, 0);
      return;
    }
    const g = p.b0 + bi;
    const n = this.count[g]!;
    // A band never holds more than its recorded size (restock fills gaps, a refunded order puts
    // back what it took), which is its room: a write past it would land in the next band.
    if (n === this.cap[g]!) throw new Error(`dynamic market: band ${bi} of ${p.t.packType} is over its size`);
    this.ids[this.off[g]! + n] = id;
    this.ver[g] = this.ver[g]! + 1;
    const at = 2 * (this.valOff[g]! + id);
    this.esum[g] = this.esum[g]! + this.idTerms[at + 1]!;
    this.counted(p, bi, this.idTerms[at]!);
  }

  /** The pack's own bookkeeping of a card entering band bi (count, sum, drawability, gap). */
  private counted(p: PackState, bi: number, value: number): void {
    const g = p.b0 + bi;
    const n = this.count[g]! + 1;
    this.count[g] = n;
    if (n === 1) this.liveChange(p, bi, 1);
    if (n <= this.size[g]!) p.gap--;
    this.sum[g] = this.sum[g]! + value;
  }

  /**
   * The card at `position` of band `bi` leaves pack p (the band's last card takes its position);
   * returns its value id (NO_CARD in an ignored pack, which keeps no cards).
   */
  private takeAt(p: PackState, bi: number, position: number): number {
    const g = p.b0 + bi;
    const n = this.count[g]! - 1;
    let id = NO_CARD;
    let value = 0;
    if (!p.ignored) {
      const ids = this.ids;
      const at = this.off[g]!;
      id = ids[at + position]!;
      ids[at + position] = ids[at + n]!;
      this.ver[g] = this.ver[g]! + 1;
      const v = 2 * (this.valOff[g]! + id);
      value = this.idTerms[v]!;
      // Back to an exact zero when the band empties: the running sum never drifts far.
      this.esum[g] = n === 0 ? 0 : this.esum[g]! - this.idTerms[v + 1]!;
    }
    this.count[g] = n;
    if (n === 0) this.liveChange(p, bi, -1);
    if (n < this.size[g]!) p.gap++;
    this.sum[g] = this.sum[g]! - value;
    return id;
  }

  /** Value (cents) of the card with value id `id` in market band g (0 for NO_CARD). */
  private valueOf(g: number, id: number): number {
    return id === NO_CARD ? 0 : this.idTerms[2 * (this.valOff[g]! + id)]!;
  }

  /** Gives the pack's scorers the cards of every band that changed since they last had them. */
  private sync(p: PackState): void {
    const scorers = p.scorers;
    for (let bi = 0; bi < p.nb; bi++) {
      const g = p.b0 + bi;
      if (this.ver[g] === this.synced[g]) continue;
      for (let i = 0; i < scorers.length; i++)
        scorers[i]!.setBand(bi, this.ids, this.off[g]!, this.count[g]!);
      this.synced[g] = this.ver[g]!;
    }
  }

  /** The chase is pulled: gone for everyone, and always worth a rescore. */
  private hitChase(p: PackState): void {
    p.chaseHit = true;
    this.openDirty = true;
    p.changes += p.cardCount + 1;
  }

  private chaseActive(p: PackState, now: number): boolean {
    return p.chaseP > 0 && !p.chaseHit && now < p.chaseEndsAt;
  }

  /** Whether pack p can be drawn at risk level r (position in its pools). */
  private drawable(p: PackState, r: number, now: number): boolean {
    return p.live[r]! > 0 || this.chaseActive(p, now);
  }

  /**
   * Where one pull from pack p at risk level r comes from: the chase (DRAW_CHASE, hit at once), else
   * a band by renormalised odds (its index in the pack), or DRAW_NOTHING when nothing can be drawn.
   * The caller then takes a card of the band uniformly (`pullFrom`).
   */
  private drawBand(p: PackState, r: number, now: number, rng: Rng): number {
    if (this.chaseActive(p, now) && pullsChase(rng.next(), p.chaseP)) {
      this.hitChase(p);
      return DRAW_CHASE;
    }
    if (p.cumDirty) this.rebuildCum(p);
    const total = p.cumTotal[r]!;
    if (!(total > 0)) return DRAW_NOTHING;
    return pickRunning(rng.next() * total, p.cum, r * p.nb, p.nb);
  }

  /** A card drawn uniformly from band bi of pack p leaves it; returns its value id (as `takeAt`). */
  private pullFrom(p: PackState, bi: number, rng: Rng): number {
    // An ignored pack keeps no cards, so no position is drawn (takeAt does not read it).
    const id = this.takeAt(p, bi, p.ignored ? 0 : rng.int(this.count[p.b0 + bi]!));
    p.changes++;
    p.cardCount--;
    return id;
  }

  /**
   * The world moves on its tick (an hour by default), not event by event: at each tick the
   * hour's other-user openings (a Poisson count, each one exactly as the simulator draws it), the
   * hour's card arrivals (a Poisson count per pack with a gap), the simulator's band refill and the
   * value drift are applied, in that order. Between ticks the world's pools stand still (our own
   * pulls still take cards at once). The simulator applies openings and arrivals at exponential
   * times instead; counts per hour have the same Poisson law, only their order within the hour
   * differs (documented in docs/backtest.md).
   */
  advance(now: number): void {
    const step = this.tickMs;
    const dtHours = step / HOUR_MS;
    while (this.nextTick <= now) {
      const at = this.nextTick;
      this.otherOpenings(poissonCount(this.dyn.others_pack_openings_per_hour, dtHours, this.rng), at);
      this.arrivals(this.dyn.restock_cards_per_hour_per_pack, dtHours);
      this.shopWorld?.othersBuy(dtHours);
      const k = Math.round((at - this.start) / step);
      const index = this.index;
      for (let c = 0; c < index.length; c++) index[c] = this.indexAt(k, c);
      this.refillBands(dtHours);
      this.shopWorld?.restock(dtHours);
      this.nextTick += step;
    }
  }

  private openToOthers(p: PackState, at: number): boolean {
    const pools = p.t.pools;
    for (let r = 0; r < pools.length; r++)
      if (pools[r]!.body.available && this.drawable(p, r, at)) return true;
    return false;
  }

  /** Rebuilds `openList` (see there). */
  private refreshOpenList(at: number): void {
    if (this.openList.length < this.packs.length) this.openList = new Int32Array(this.packs.length);
    let n = 0;
    let until = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.packs.length; i++) {
      const p = this.packs[i]!;
      if (this.openToOthers(p, at)) this.openList[n++] = i;
      if (p.chaseEndsAt > at && p.chaseEndsAt < until) until = p.chaseEndsAt;
    }
    this.openCount = n;
    this.openDirty = false;
    this.openValidUntil = until;
  }

  /** `n` other users' openings at `at`: each exactly as the simulator draws one. */
  private otherOpenings(n: number, at: number): void {
    const rng = this.rng;
    const packs = this.packs;
    const count = this.count;
    for (let i = 0; i < n; i++) {
      if (this.openDirty || at >= this.openValidUntil) this.refreshOpenList(at);
      const open = this.openCount;
      if (open === 0) return;
      // By popularity: a snapshot records none, so every pack has the same (the world's default).
      const p = packs[this.openList[pickEqual(open, rng)]!]!;
      // As `drawBand` at a risk level chosen like the simulator (`othersRiskShare`), with the risk
      // level and the band drawn at once from the pack's mixture of them.
      if (this.chaseActive(p, at) && pullsChase(rng.next(), p.chaseP)) {
        this.hitChase(p);
        continue;
      }
      if (p.cumDirty) this.rebuildCum(p);
      const u = rng.next();
      // The mass of risk levels with nothing to draw: that opening fails and takes nothing.
      if (!(u < p.mixTotal)) continue;
      const b0 = p.b0;
      const chosen = pickRunning(u, this.mixCum, b0, p.nb);
      // `pullFrom` by hand: the world's hottest loop (see docs/backtest.md, Performance design).
      this.takeAt(p, chosen, p.ignored ? 0 : rng.int(count[b0 + chosen]!));
      p.changes++;
      p.cardCount--;
    }
  }

  /**
   * The simulator's tick refill (src/market/dynamics.ts `restock`): each band regains the share
   * 1 − e^(−rate·dt) of its gap to its recorded size, rounded stochastically, on top of the
   * Poisson trickle of `restock()`, so the backtest restocks as fast as `packbot sim`.
   */
  private refillBands(dtHours: number): void {
    const share = refillShare(this.dyn.restock_fraction_per_hour, dtHours);
    if (!(share > 0)) return;
    for (const p of this.packs) {
      if (p.gap <= 0) continue;
      for (let bi = 0; bi < p.nb; bi++) {
        const n = refillCount(bandGap(this.size[p.b0 + bi]!, this.count[p.b0 + bi]!), share, this.rng);
        for (let i = 0; i < n; i++) {
          this.newCard(p, bi);
          p.changes++;
          p.cardCount++;
        }
      }
    }
  }

  /**
   * Card arrivals of one tick: per pack with a gap, a Poisson count (mean `perPack`), each card
   * into a band drawn in proportion to the band's gap (arrivals to a full pack are lost, as in the
   * simulator's `arrival`).
   */
  private arrivals(ratePerHour: number, dtHours: number): void {
    if (!(ratePerHour > 0)) return;
    const rng = this.rng;
    const packs = this.packs;
    const count = this.count;
    const size = this.size;
    for (let pi = 0; pi < packs.length; pi++) {
      const p = packs[pi]!;
      if (p.gap <= 0) continue;
      const b0 = p.b0;
      const nb = p.nb;
      for (let k = poissonCount(ratePerHour, dtHours, rng); k > 0 && p.gap > 0; k--) {
        const bi = pickByGap(rng.int(p.gap), size, count, b0, nb);
        if (bi < 0) break; // cannot happen: the gap is the sum of the bands' gaps
        this.newCard(p, bi);
        p.changes++;
        p.cardCount++;
      }
    }
  }

  /**
   * A pack is rescored when its contents expected value moved by 0.5% (or the chase went, or
   * it became empty) and the rescore interval has passed; other packs keep their rows. Rows come
   * from the packs' incremental scorers: the rows `scorePools` gives on the pools as they are now.
   */
  rows(balanceCents: number, now: number): readonly ScoreRow[] {
    const due = now >= this.rowsAt + this.rescoreMs;
    if (this.rowsCache && !this.forceRescore && !due) return this.rowsCache;
    let changed = this.rowsCache === null;
    const ctx = { balanceCents, maxQuantity: this.model.maxQuantity };
    for (const p of this.packs) {
      // Excluded packs are scored once (their rows wait, "excluded by the strategy", for good).
      if (p.ignored && p.riskRows[0] !== undefined && this.rowsCache) continue;
      let drawableNow = false;
      for (let r = 0; r < p.t.pools.length; r++) if (this.drawable(p, r, now)) drawableNow = true;
      // Only a move of the pool's expected value by RESCORE_EV_MOVE (or the chase going) is worth a rescore.
      const ev = this.quickEv(p, now);
      const enough =
        p.changes > p.cardCount || Math.abs(ev - p.scoredEv) > RESCORE_EV_MOVE * Math.max(1, p.scoredEv);
      if (!(enough && due) && !p.mustRescore && drawableNow === p.wasDrawable && this.rowsCache) continue;
      // Every row kept: nothing was looked at afresh, so the change detector keeps its baseline.
      if (!this.rescorePack(p, now, ctx)) continue;
      p.changes = 0;
      p.scoredEv = ev;
      p.wasDrawable = drawableNow;
      p.mustRescore = false;
      changed = true;
    }
    // In pack order: decideOpen orders the rows itself (compareRows).
    if (changed || !this.rowsCache) {
      const all: ScoreRow[] = [];
      for (const p of this.packs) for (const row of p.rows) all.push(row);
      this.rowsCache = all;
    }
    if (due) this.rowsAt = now;
    this.forceRescore = false;
    return this.rowsCache;
  }

  /**
   * Pack p's rows afresh, each risk level's from its scorer unless its last row stands
   * (`rowStands`); sets `p.rows` and returns true if any row was made afresh, else changes nothing.
   */
  private rescorePack(p: PackState, now: number, ctx: ScoreContext): boolean {
    let synced = p.ignored;
    const chase = this.chaseActive(p, now) ? p.t.chase : null;
    const rows: ScoreRow[] = [];
    let rescored = false;
    for (let r = 0; r < p.t.pools.length; r++) {
      const view = p.views[r]!;
      const drawableR = this.drawable(p, r, now);
      view.chase = chase;
      let row = p.riskRows[r];
      if (row === undefined || !this.rowStands(p, r, row, drawableR, view)) {
        view.available = p.t.pools[r]!.body.available && drawableR;
        if (!synced) {
          this.sync(p);
          synced = true;
        }
        row = p.scorers[p.riskScorer[r]!]!.rowFor(view, ctx);
        p.riskRows[r] = row;
        p.riskDrawable[r] = drawableR ? 1 : 0;
        rescored = true;
      }
      if (row) rows.push(row);
    }
    if (rescored) p.rows = rows;
    return rescored;
  }

  /**
   * Whether risk level r's last row `old` (view: its pool, chase set) still holds: no forced
   * rescore, the same drawability, and nothing drawable then, or a risk level the strategy
   * excludes (its row waits whatever its numbers), or a wait that `stillBelow` keeps.
   */
  private rowStands(
    p: PackState,
    r: number,
    old: ScoreRow | null,
    drawableR: boolean,
    view: PackPool,
  ): boolean {
    return (
      !p.mustRescore &&
      drawableR === (p.riskDrawable[r] === 1) &&
      (old === null || p.excluded[r] === 1 || (old.decision.action !== 'open' && this.stillBelow(p, r, view)))
    );
  }

  /**
   * Whether risk level r of pack p cannot be open-worthy now, so its last row (a wait) stands: the
   * realised mean the decision would read is below min_ev_ratio × price, and `decide` (score.ts)
   * then waits whatever else changed. The mean comes from running sums (equal to the row's within
   * ~1e-12); a 1e-6 margin keeps a pool that close to the threshold rescored. Keeping such a row
   * changes no decision, only how stale its wait reason and numbers are.
   */
  private stillBelow(p: PackState, r: number, view: PackPool): boolean {
    const price = view.price * 100;
    if (!(price > 0)) return false;
    const mean = p.scorers[p.riskScorer[r]!]!.realizedMeanOf(view, p.countView, p.esumView);
    return mean < this.model.strategy.open.min_ev_ratio * price * (1 - STILL_BELOW_MARGIN);
  }

  /** The pricing model's EV (DESIGN.md), summed over the pack's risk levels: a change detector. */
  private quickEv(p: PackState, now: number): number {
    const chase = this.chaseActive(p, now) ? p.t.chase! : null;
    const pc = chase ? chase.probability : 0;
    let total = 0;
    for (let r = 0; r < p.t.pools.length; r++) {
      const odds = p.odds[r]!;
      let w = 0;
      let acc = 0;
      for (let i = 0; i < p.nb; i++) {
        const n = this.count[p.b0 + i]!;
        const o = n > 0 ? odds[i]! : 0;
        if (o <= 0) continue;
        w += o;
        acc += (o * this.sum[p.b0 + i]!) / n;
      }
      total += (chase ? pc * toCents(chase.card.market_value) : 0) + (w > 0 ? ((1 - pc) * acc) / w : 0);
    }
    return total;
  }

  /** The pull law `open` draws from now: the chase, else a band by live odds, a card uniformly. */
  drawParts(pool: number, now: number, out: DrawParts): void {
    clearDrawParts(out);
    const p = this.packs[this.poolPack[pool]!];
    if (!p || p.ignored) return;
    const r = this.poolRisk[pool]!;
    const plans = this.model.plans;
    let rest = 1;
    if (this.chaseActive(p, now)) {
      rest = 1 - p.chaseP;
      addDrawn(out, plans, plans.planFor(toCents(p.t.chase!.card.market_value), false), p.chaseP);
    }
    if (p.cumDirty) this.rebuildCum(p);
    const total = p.cumTotal[r]!;
    if (!(total > 0)) return;
    let below = 0;
    for (let bi = 0; bi < p.nb; bi++) {
      const cum = p.cum[r * p.nb + bi]!;
      const g = p.b0 + bi;
      const n = this.count[g]!;
      const each = (rest * (cum - below)) / total / n;
      below = cum;
      if (!(each > 0)) continue;
      const at = this.off[g]!;
      const sealed = this.sealed[g] === 1;
      for (let k = 0; k < n; k++)
        addDrawn(out, plans, plans.planFor(this.valueOf(g, this.ids[at + k]!), sealed), each);
    }
  }

  nextRefreshAt(now: number): number {
    return Math.max(now + 1, this.rowsAt + this.rescoreMs);
  }

  open(pool: number, qty: number, now: number, rng: Rng, out: Int32Array): number {
    const pi = this.poolPack[pool]!;
    const p = this.packs[pi];
    const modelPool = this.model.pools[pool]!;
    if (!p || !modelPool.body.available) return ORDER_FAILED;
    const r = this.poolRisk[pool]!;
    this.undo.length = 0;
    for (let k = 0; k < qty; k++) {
      const band = this.drawBand(p, r, now, rng);
      if (band === DRAW_NOTHING) {
        // All or nothing (spec): the order fails, every pulled card goes back, nothing is charged.
        for (let j = this.undo.length - 2; j >= 0; j -= 2) {
          const id = this.undo[j]!;
          const b = this.undo[j + 1]!;
          if (b === NO_BAND) {
            p.chaseHit = false;
            this.openDirty = true;
          } else {
            this.put(p, b, id);
            p.cardCount++;
          }
        }
        // The bot re-reads the pools after a refunded order (account-bot onFailed): so does this.
        this.forceRescore = true;
        p.mustRescore = true;
        return ORDER_FAILED;
      }
      if (band === DRAW_CHASE) {
        this.undo.push(NO_CARD, NO_BAND);
        out[k] = this.model.plans.planFor(toCents(p.t.chase!.card.market_value), false);
        continue;
      }
      const g = p.b0 + band;
      const id = this.pullFrom(p, band, rng);
      this.undo.push(id, band);
      out[k] = this.model.plans.planFor(this.valueOf(g, id), this.sealed[g] === 1);
    }
    // A pack we just emptied is unavailable from now on: the bot would see it at once.
    if (!this.drawable(p, r, now)) this.forceRescore = true;
    return qty;
  }

  /** Slot of listing l's category: its pool's, or a bought card's own. */
  private categoryOf(l: Listing): number {
    return l.bought ? slotOf(l.category) : this.poolCategory[l.pool]!;
  }

  /** The value index of listing l's category (1 for a category the world does not move). */
  private indexOf(l: Listing): number {
    const c = this.categoryOf(l);
    return c === NO_CATEGORY ? 1 : this.index[c]!;
  }

  /** What listing l's card is worth now (its value at acquisition moved by its category's index). */
  valueNow(l: Listing): number {
    return roundHalfAway((acquiredValue(l) * this.indexOf(l)) / l.anchorIndex);
  }

  /**
   * A new listing's whole life, decided at once: its card's value follows its category's index
   * path (drawn ahead, independent of everything else), so every decision `decideListing` takes
   * on the way (the bot looks at its listings after each tick and at each decision's `until`) can
   * be taken now. Repricing changes nothing the path sees (equity counts a listing at its
   * sell-back value); only the end does: one event, the sale or the delisting with sell-back.
   */
  list(l: Listing, now: number, rng: Rng): void {
    l.anchorIndex = this.indexOf(l);
    // The simulator fills a listing at each tick with probability 1 − e^(−rate·dt): the same law
    // as selling at the first tick where Σ rate·dt reaches one exponential draw.
    l.fillBudget = rng.exponential(1);
    this.resolve(l, now);
  }

  /** Listing l's card value after tick k (tick 0: the start), as `valueNow` gives it then. */
  private valueAfterTick(l: Listing, c: number, k: number): number {
    return roundHalfAway((acquiredValue(l) * (c === NO_CATEGORY ? 1 : this.indexAt(k, c))) / l.anchorIndex);
  }

  /**
   * From `from`, alternately: decide (`decideListing`; a reprice is applied and decided again),
   * then look ahead tick by tick to the first tick where the listing sells (the tick's fill, at
   * the value after its drift), or where its value leaves the range over which the decision
   * holds (`keepRange`), or to the decision's own `until`. Ends with the outcome, its time and
   * amount set. The same decisions as deciding at every tick (test/backtest/dynamic-listings).
   */
  private resolve(l: Listing, from: number): void {
    const strategy = this.model.strategy;
    const v = this.listingView;
    v.listedAt = l.listedAt;
    v.basisValueCents = l.basisCents;
    v.lockedValueUntil = lockEnds(l.pulledAt, this.rules);
    const keep = this.keep;
    const step = this.tickMs;
    const dtDays = step / DAY_MS;
    const base = this.dyn.listing_fills_per_day_at_value;
    const sensitivity = this.dyn.listing_price_sensitivity;
    const c = this.categoryOf(l);
    let now = from;
    // The last tick at or before `now`: the value the decision sees.
    let k = Math.floor((now - this.start) / step);
    for (let first = true; ; first = false) {
      v.priceCents = l.priceCents;
      v.marketValueCents = this.valueAfterTick(l, c, k);
      // Past the first decision the value left its range or `until` came: the decision changes
      // (or, rarely, keeps with another range), so decideListing is asked first.
      let kept = first && keepRange(v, strategy, now, keep);
      for (let i = 0; !kept && i < DECISIONS_PER_LOOK; i++) {
        const d = decideListing(v, strategy, now);
        if (d.action === 'delist_and_sell_back') {
          l.eventAt = now;
          l.outcome = 'sold_back';
          l.amountCents = this.holdValueAt(l, now, v.marketValueCents);
          return;
        }
        if (d.action === 'reprice') l.priceCents = v.priceCents = d.priceCents;
        kept = keepRange(v, strategy, now, keep);
      }
      if (!kept) {
        // Cannot happen (a reprice's price holds at once); decide again at the next tick anyway.
        keep.lo = keep.hi = v.marketValueCents;
        keep.until = this.start + (k + 1) * step;
      }
      const price = l.priceCents;
      for (k++; ; k++) {
        const at = this.start + k * step;
        if (at > keep.until) {
          now = keep.until;
          k--;
          break;
        }
        const value = this.valueAfterTick(l, c, k);
        l.fillBudget -= fillRatePerDay(price, value, base, sensitivity) * dtDays;
        if (l.fillBudget <= 0) {
          l.eventAt = at;
          l.outcome = 'sold';
          l.amountCents = price - applyRate(price, this.rules.seller_fee_rate);
          return;
        }
        if (value < keep.lo || value > keep.hi) {
          now = at;
          break;
        }
      }
    }
  }

  /**
   * Equity marks a listed card at what selling it back pays once the pull's fresh window is over
   * (the locked rate of its basis, then the market rate of its value), as the bot's budget marks
   * its holdings (src/bot/budget-state.ts), even inside the fresh window.
   */
  holdValue(l: Listing, now: number): number {
    const past = Math.max(now, freshEnds(l.pulledAt, this.rules) + 1);
    return this.holdValueAt(l, past, this.valueNow(l));
  }

  /** What selling the card back pays at `at` when it is worth `valueCents` then (`sellBackAmount`). */
  private holdValueAt(l: Listing, at: number, valueCents: number): number {
    return sellBackAmount(
      l.bought ? 'purchase' : 'pull',
      l.pulledAt,
      l.basisCents,
      valueCents,
      at,
      this.rules,
    );
  }
}

/** A listed card's value when acquired: a pull's is its basis, a bought card's is recorded apart. */
function acquiredValue(l: Listing): number {
  return l.bought ? l.valueCents! : l.basisCents;
}

/** A category's slot in CATEGORY_SLOT (NO_CATEGORY: one the world does not move). */
function slotOf(category: string): number {
  return CATEGORY_SLOT.get(category) ?? NO_CATEGORY;
}
