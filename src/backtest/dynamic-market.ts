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
import { fillRatePerDay } from '../market/dynamics.js';
import { type Dynamics, DynamicsSpec, type Rules, RulesSpec } from '../market/world-schema.js';
import { decideListing, type ListingView } from '../strategy/decide-listing.js';
import { IncrementalScorer } from '../strategy/incremental-score.js';
import { excludedBy, type ScoreRow } from '../strategy/score.js';
import type { BacktestModel } from './model.js';
import { type Listing, type PathMarket, STEP_CONTINUE, STEP_SOLD, STEP_SOLD_BACK } from './path-market.js';
import { valueGrid } from './value-grid.js';

export type DynamicsInput = Partial<Dynamics> & { rescore_minutes?: number };

const LOCK_MS = 7 * DAY_MS;

/** The API's categories, in the order their value indexes draw their moves each tick. */
const CATEGORY_SLOT = new Map<string, number>(CATEGORIES.map((c, i) => [c, i]));

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
  t: PackTemplate;
  /**
   * Per band: card count, Σ value (cents, exact integers: the band mean without a scan), recorded
   * size. The cards are ids into the band's values (`idTerms`), kept by position in one typed array
   * for the pack (`ids`, band bi from `off[bi]`, room for `cap[bi]`): a pull takes a uniformly
   * drawn position of the chosen band. The scorers are not fed card by card: a band's cards are
   * copied into them (`sync`) when the pack is scored after the band changed (`ver`).
   */
  count: Int32Array;
  sum: Float64Array;
  size: Int32Array;
  ids: Int32Array;
  off: Int32Array;
  cap: Int32Array;
  /** Per band: change counter, and its value when the scorers were last given the band's cards. */
  ver: Int32Array;
  synced: Int32Array;
  /**
   * Value (cents) and expected realised value by band and id, side by side (one cache line for a
   * card change): at `2 * (valOff[bi] + id)` and the next. Ids are the same in every scorer of the
   * pack. `esum`: the running Σ of expected realised value per band (`realizedMeanOf`).
   */
  idTerms: Float64Array;
  valOff: Int32Array;
  esum: Float64Array;
  /** Per band: the ids a generated card can take (its value grid): `gridId[gridOff[bi] + k]`, k < `gridLen[bi]`. */
  gridId: Int32Array;
  gridOff: Int32Array;
  gridLen: Int32Array;
  sealed: Uint8Array;
  /** Band odds per risk level (t.pools order), by band. */
  odds: Float64Array[];
  /**
   * The strategy excludes every risk level of the pack: its rows wait whatever it holds, so only
   * its band counts are kept (other users still open it while it has cards), not its cards.
   */
  ignored: boolean;
  /** Per risk level: bands holding a card with odds > 0 (drawable without a scan). */
  live: Int32Array;
  /** Per risk level × band: running odds over bands holding cards; rebuilt when a band empties or refills. */
  cum: Float64Array;
  cumTotal: Float64Array;
  lastLive: Int32Array;
  cumDirty: boolean;
  /** Other users' openings: running P(band) over risk levels (total < 1 when a level is empty). */
  mixCum: Float64Array;
  mixTotal: number;
  mixLast: number;
  /** Position of the 'standard' risk level in t.pools, −1 if none. */
  standard: number;
  /** Incremental scorers (one per distinct price), given the bands that changed when a row is needed (`sync`). */
  scorers: IncrementalScorer[];
  /** Per risk level: its scorer and the pool it stands for (available/chase set when scoring). */
  riskScorer: Int32Array;
  views: PackPool[];
  /** The chase's probability (0 without one). */
  chaseP: number;
  chaseHit: boolean;
  chaseEndsAt: number;
  /** Cards taken or added since the pack was last scored. */
  changes: number;
  /** Whether the pack could be drawn at each of its risk levels when last scored. */
  wasDrawable: boolean;
  /** Rescore at the next look whatever the interval (an order of ours failed on this pack). */
  mustRescore: boolean;
  /** Per risk level: its last row (null: nothing drawable; undefined: never scored) and drawability then. */
  riskRows: (ScoreRow | null | undefined)[];
  riskDrawable: Uint8Array;
  cardCount: number;
  /** Σ over bands of max(0, recorded size − cards): the restock gap, kept on every put/take. */
  gap: number;
  /** Expected pull value (summed over risk levels) when last scored. */
  scoredEv: number;
  rows: ScoreRow[];
}

/** A pack's recorded (listed) cards, scored once per model: paths start from copies. */
interface PackStart {
  ignored: boolean;
  size: Int32Array;
  sealed: Uint8Array;
  odds: Float64Array[];
  standard: number;
  views: PackPool[];
  /** The recorded cards as ids by position (layout of PackState `ids`), and the id tables. */
  ids: Int32Array;
  off: Int32Array;
  cap: Int32Array;
  idTerms: Float64Array;
  valOff: Int32Array;
  esum: Float64Array;
  gridId: Int32Array;
  gridOff: Int32Array;
  gridLen: Int32Array;
  count: Int32Array;
  sum: Float64Array;
  scorers: IncrementalScorer[];
  riskScorer: Int32Array;
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

const starts = new WeakMap<BacktestModel, PackStart[]>();

function packStarts(model: BacktestModel): PackStart[] {
  const cached = starts.get(model);
  if (cached) return cached;
  const list = packTemplates(model).map((t) => {
    const prices: number[] = [];
    const scorers: IncrementalScorer[] = [];
    const riskScorer = new Int32Array(t.pools.length);
    t.pools.forEach((x, r) => {
      const price = toCents(x.body.price);
      let i = prices.indexOf(price);
      if (i < 0) {
        i = prices.length;
        prices.push(price);
        scorers.push(new IncrementalScorer(scorerTemplate(t, x), model.strategy));
      }
      riskScorer[r] = i;
    });
    const nb = t.bands.length;
    const count = new Int32Array(nb);
    const sum = new Float64Array(nb);
    const esum = new Float64Array(nb);
    // Ids are handed out in first-seen order per band and every scorer is fed the same values in
    // the same order, so a value has the same id in each: one id per card serves them all.
    const idOf = (bi: number, v: number): number => {
      const id = scorers[0]!.valueId(bi, v);
      for (let i = 1; i < scorers.length; i++)
        if (scorers[i]!.valueId(bi, v) !== id) throw new Error('scorers of one pack disagree on value ids');
      byId[bi]![id] = v;
      return id;
    };
    const byId: number[][] = t.bands.map(() => []);
    const cap = Int32Array.from(t.bands, (b) => Math.max(1, b.size, b.cards.length));
    const off = offsets(cap);
    const ids = new Int32Array(total(cap));
    t.bands.forEach((bt, bi) => {
      for (const c of bt.cards) {
        const v = toCents(c.market_value);
        for (const s of scorers) s.addValue(bi, v);
        const id = idOf(bi, v);
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
      ignored: t.pools.every((x) => excludedBy(x.body, model.strategy) !== null),
      size: Int32Array.from(t.bands, (b) => b.size),
      sealed: Uint8Array.from(t.bands, (b) => (b.sealed ? 1 : 0)),
      odds: t.pools.map((x) => Float64Array.from(t.bands, (b) => b.odds.get(x.risk) ?? 0)),
      standard: t.pools.findIndex((x) => x.risk === 'standard'),
      views: t.pools.map((x) => scorerTemplate(t, x)),
      ids,
      off,
      cap,
      idTerms,
      valOff,
      esum,
      gridId,
      gridOff,
      gridLen,
      count,
      sum,
      scorers,
      riskScorer,
    };
  });
  starts.set(model, list);
  return list;
}

interface Settings {
  dyn: Dynamics;
  rules: Rules;
  rescoreMs: number;
}

const settingsCache = new WeakMap<DynamicsInput, Settings>();
const NO_OVERRIDES: DynamicsInput = {};

/** Rates validated once per overrides object (zod per path cost as much as a day of the world). */
function settingsFor(overrides: DynamicsInput): Settings {
  const cached = settingsCache.get(overrides);
  if (cached) return cached;
  const { rescore_minutes, ...rates } = overrides;
  const s = {
    dyn: DynamicsSpec.parse(rates),
    rules: RulesSpec.parse({}),
    rescoreMs: (rescore_minutes ?? 240) * 60_000,
  };
  settingsCache.set(overrides, s);
  return s;
}

/**
 * The first band holding cards whose running weight (`cum[base + band]`) exceeds x, or `fallback`
 * (the last such band) when rounding leaves x at or above the total.
 */
function pickBand(cum: Float64Array, base: number, count: Int32Array, x: number, fallback: number): number {
  for (let i = 0; i < count.length; i++) if (x < cum[base + i]! && count[i]! > 0) return i;
  return fallback;
}

export class DynamicMarket implements PathMarket {
  private readonly dyn: Dynamics;
  private readonly rules: Rules;
  private readonly rescoreMs: number;
  private readonly rng: Rng;
  private readonly packs: PackState[];
  /** Model pool index → pack, and position of its risk level in the pack's pools. */
  private readonly poolPack: Int32Array;
  private readonly poolRisk: Int32Array;
  /** Category value indexes (they start at 1), by position in CATEGORY_SLOT. */
  private readonly index = new Float64Array(CATEGORY_SLOT.size).fill(1);
  private nextTick: number;
  private rowsCache: readonly ScoreRow[] | null = null;
  private rowsAt = Number.NEGATIVE_INFINITY;
  private forceRescore = true;

  constructor(
    private readonly model: BacktestModel,
    seed: number,
    pathIndex: number,
    overrides: DynamicsInput = NO_OVERRIDES,
  ) {
    const settings = settingsFor(overrides);
    this.dyn = settings.dyn;
    this.rules = settings.rules;
    this.rescoreMs = settings.rescoreMs;
    // The world's own stream: separate from the path's draws so one cannot shift the other.
    this.rng = new Rng((seed ^ 0x6d2b79f5) >>> 0).fork(pathIndex);
    const tpl = packTemplates(model);
    const begin = packStarts(model);
    this.poolPack = new Int32Array(model.pools.length).fill(-1);
    this.poolRisk = new Int32Array(model.pools.length).fill(-1);
    this.packs = tpl.map((t, pi) => {
      t.pools.forEach((p, r) => {
        this.poolPack[p.index] = pi;
        this.poolRisk[p.index] = r;
      });
      const st = begin[pi]!;
      const p: PackState = {
        t,
        count: st.count.slice(),
        sum: st.sum.slice(),
        size: st.size,
        ids: st.ids.slice(),
        off: st.off,
        cap: st.cap,
        ver: new Int32Array(t.bands.length).fill(1),
        synced: new Int32Array(t.bands.length),
        idTerms: st.idTerms,
        valOff: st.valOff,
        esum: st.esum.slice(),
        gridId: st.gridId,
        gridOff: st.gridOff,
        gridLen: st.gridLen,
        sealed: st.sealed,
        odds: st.odds,
        ignored: st.ignored,
        live: new Int32Array(t.pools.length),
        cum: new Float64Array(t.pools.length * t.bands.length),
        cumTotal: new Float64Array(t.pools.length),
        lastLive: new Int32Array(t.pools.length),
        cumDirty: true,
        mixCum: new Float64Array(t.bands.length),
        mixTotal: 0,
        mixLast: -1,
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
        chaseP: t.chase ? t.chase.probability : 0,
        chaseHit: false,
        chaseEndsAt: t.chase?.ends_at ? Date.parse(t.chase.ends_at) : Number.POSITIVE_INFINITY,
        changes: 1,
        scoredEv: 0,
        wasDrawable: true,
        mustRescore: false,
        riskRows: t.pools.map(() => undefined),
        riskDrawable: new Uint8Array(t.pools.length),
        cardCount: 0,
        gap: 0,
        rows: [],
      };
      for (let bi = 0; bi < t.bands.length; bi++) {
        if (p.count[bi]! > 0) this.liveChange(p, bi, 1);
        // Unseen cards of a truncated band: values drawn within its bounds, as the simulator does.
        for (let k = p.count[bi]!; k < p.size[bi]!; k++) this.newCard(p, bi);
      }
      p.gap = 0;
      for (let bi = 0; bi < t.bands.length; bi++) {
        p.cardCount += p.count[bi]!;
        p.gap += Math.max(0, p.size[bi]! - p.count[bi]!);
      }
      return p;
    });
    const start = model.startMs;
    this.nextTick = start + this.dyn.tick_seconds * 1000;
  }

  /** A new card in band bi, its value drawn uniformly from the band's value grid. */
  private newCard(p: PackState, bi: number): void {
    if (p.ignored) {
      this.counted(p, bi, 0);
      return;
    }
    const id = p.gridId[p.gridOff[bi]! + this.rng.int(p.gridLen[bi]!)]!;
    this.put(p, bi, id);
  }

  /** Per risk level: running odds of the bands holding cards, their total and the last such band. */
  private rebuildCum(p: PackState): void {
    const nb = p.count.length;
    for (let r = 0; r < p.odds.length; r++) {
      const odds = p.odds[r]!;
      let acc = 0;
      let last = -1;
      for (let i = 0; i < nb; i++) {
        if (p.count[i]! > 0 && odds[i]! > 0) {
          acc += odds[i]!;
          last = i;
        }
        p.cum[r * nb + i] = acc;
      }
      p.cumTotal[r] = acc;
      p.lastLive[r] = last;
    }
    // Other users' mixture: P(risk level) × its band odds among live bands.
    const nr = p.odds.length;
    const mix = p.mixCum;
    mix.fill(0);
    let last = -1;
    for (let r = 0; r < nr; r++) {
      const total = p.cumTotal[r]!;
      if (!(total > 0)) continue;
      const pr = p.standard >= 0 ? (r === p.standard ? 0.6 : 0) + 0.4 / nr : 1 / nr;
      const odds = p.odds[r]!;
      for (let i = 0; i < nb; i++)
        if (p.count[i]! > 0 && odds[i]! > 0) {
          mix[i] = mix[i]! + (pr * odds[i]!) / total;
          if (i > last) last = i;
        }
    }
    let acc = 0;
    for (let i = 0; i < nb; i++) {
      acc += mix[i]!;
      mix[i] = acc;
    }
    p.mixTotal = acc;
    p.mixLast = last;
    p.cumDirty = false;
  }

  /** Band bi of pack p went from empty to not (+1) or back (−1). */
  private liveChange(p: PackState, bi: number, d: number): void {
    this.openDirty = true;
    p.cumDirty = true;
    for (let r = 0; r < p.odds.length; r++) if (p.odds[r]![bi]! > 0) p.live[r] = p.live[r]! + d;
  }

  /** The card with id `id` enters band `bi` of pack p (at its last position). */
  private put(p: PackState, bi: number, id: number): void {
    const n = p.count[bi]!;
    // A band never holds more than its recorded size (restock fills gaps, a refunded order puts
    // back what it took), which is its room: a write past it would land in the next band.
    if (n === p.cap[bi]!) throw new Error(`dynamic market: band ${bi} of ${p.t.packType} is over its size`);
    p.ids[p.off[bi]! + n] = id;
    p.ver[bi] = p.ver[bi]! + 1;
    const at = 2 * (p.valOff[bi]! + id);
    p.esum[bi] = p.esum[bi]! + p.idTerms[at + 1]!;
    this.counted(p, bi, p.idTerms[at]!);
  }

  /** The pack's own bookkeeping of a card entering band bi (count, sum, drawability, gap). */
  private counted(p: PackState, bi: number, value: number): void {
    const n = p.count[bi]! + 1;
    p.count[bi] = n;
    if (n === 1) this.liveChange(p, bi, 1);
    if (n <= p.size[bi]!) p.gap--;
    p.sum[bi] = p.sum[bi]! + value;
  }

  /**
   * The card at `position` of band `bi` leaves pack p (the band's last card takes its position);
   * returns its value, and its id in `lastId`.
   */
  private lastId = -1;
  private takeAt(p: PackState, bi: number, position: number): number {
    let value = 0;
    if (!p.ignored) {
      const ids = p.ids;
      const at = p.off[bi]!;
      const id = ids[at + position]!;
      const last = p.count[bi]! - 1;
      ids[at + position] = ids[at + last]!;
      p.ver[bi] = p.ver[bi]! + 1;
      const v = 2 * (p.valOff[bi]! + id);
      value = p.idTerms[v]!;
      // Back to an exact zero when the band empties: the running sum never drifts far.
      p.esum[bi] = last === 0 ? 0 : p.esum[bi]! - p.idTerms[v + 1]!;
      this.lastId = id;
    }
    const n = p.count[bi]! - 1;
    p.count[bi] = n;
    if (n === 0) this.liveChange(p, bi, -1);
    if (n < p.size[bi]!) p.gap++;
    p.sum[bi] = p.sum[bi]! - value;
    return value;
  }

  /** Gives the pack's scorers the cards of every band that changed since they last had them. */
  private sync(p: PackState): void {
    const scorers = p.scorers;
    for (let bi = 0; bi < p.ver.length; bi++) {
      if (p.ver[bi] === p.synced[bi]) continue;
      for (let i = 0; i < scorers.length; i++) scorers[i]!.setBand(bi, p.ids, p.off[bi]!, p.count[bi]!);
      p.synced[bi] = p.ver[bi]!;
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
   * One pull from pack p at risk level r: chase, else band by renormalised odds, then a card
   * uniformly. Returns the card's value (cents, ≥ 0), −1 for the chase, −2 when nothing can be
   * drawn; `lastBand` says where from.
   */
  private lastBand = -1;
  private draw(p: PackState, r: number, now: number, rng: Rng): number {
    if (this.chaseActive(p, now) && rng.next() < p.chaseP) {
      this.hitChase(p);
      this.lastBand = -1;
      return -1;
    }
    const count = p.count;
    if (p.cumDirty) this.rebuildCum(p);
    const total = p.cumTotal[r]!;
    if (!(total > 0)) return -2;
    const chosen = pickBand(p.cum, r * count.length, count, rng.next() * total, p.lastLive[r]!);
    const value = this.takeAt(p, chosen, p.ignored ? 0 : rng.int(count[chosen]!));
    p.changes++;
    p.cardCount--;
    this.lastBand = chosen;
    return value;
  }

  /**
   * The world moves on its tick (an hour by default), not event by event: at each tick the
   * hour's other-user openings (a Poisson count, each one exactly as the simulator draws it), the
   * hour's card arrivals (a Poisson count per pack with a gap), the simulator's band refill and the
   * value drift are applied, in that order. Between ticks the world's pools stand still (our own
   * pulls still take cards at once). The simulator applies openings and arrivals at exponential
   * times instead; counts per hour have the same Poisson law, only their order within the hour
   * differs (documented in docs/backtest.md), and the event-by-event scheduling was about a
   * third of a dynamic path's time.
   */
  advance(now: number): void {
    const step = this.dyn.tick_seconds * 1000;
    const dtHours = step / HOUR_MS;
    while (this.nextTick <= now) {
      const at = this.nextTick;
      const opens = this.rng.poisson(this.dyn.others_pack_openings_per_hour * dtHours);
      this.otherOpenings(opens, at);
      this.arrivals(this.dyn.restock_cards_per_hour_per_pack * dtHours);
      const dt = dtHours / 24;
      const sd = this.dyn.value_daily_volatility;
      const index = this.index;
      for (let c = 0; c < index.length; c++)
        index[c] =
          index[c]! *
          Math.exp(
            (this.dyn.value_daily_trend - (sd * sd) / 2) * dt + sd * Math.sqrt(dt) * this.rng.normal(),
          );
      this.refillBands(dtHours);
      this.nextTick += step;
    }
  }

  private openToOthers(p: PackState, at: number): boolean {
    const pools = p.t.pools;
    for (let r = 0; r < pools.length; r++)
      if (pools[r]!.body.available && this.drawable(p, r, at)) return true;
    return false;
  }

  /**
   * Packs open to other users, in pack order: recomputed only when a band empties or refills, a
   * chase is hit (or given back), or a chase's end time passes — the only ways it can change.
   */
  private openList = new Int32Array(0);
  private openCount = 0;
  private openDirty = true;
  private openValidUntil = Number.NEGATIVE_INFINITY;
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
    for (let i = 0; i < n; i++) {
      if (this.openDirty || at >= this.openValidUntil) this.refreshOpenList(at);
      const open = this.openCount;
      if (open === 0) return;
      const p = packs[this.openList[rng.int(open)]!]!;
      // As `draw` at a risk level chosen like the simulator (standard 60%, else any level at
      // random), with the risk level and the band drawn at once from the pack's mixture of them.
      if (this.chaseActive(p, at) && rng.next() < p.chaseP) {
        this.hitChase(p);
        continue;
      }
      if (p.cumDirty) this.rebuildCum(p);
      const u = rng.next();
      // The mass of risk levels with nothing to draw: that opening fails and takes nothing.
      if (!(u < p.mixTotal)) continue;
      const count = p.count;
      const chosen = pickBand(p.mixCum, 0, count, u, p.mixLast);
      this.takeAt(p, chosen, p.ignored ? 0 : rng.int(count[chosen]!));
      p.changes++;
      p.cardCount--;
    }
  }

  /**
   * The simulator's tick refill (src/market/dynamics.ts `restock`): each band regains the share
   * 1 − e^(−rate·dt) of its gap to its recorded size, rounded stochastically, on top of the
   * Poisson trickle of `restock()`. Without it backtests restocked slower than `packbot sim`.
   */
  private refillBands(dtHours: number): void {
    const rate = this.dyn.restock_fraction_per_hour;
    if (!(rate > 0)) return;
    const share = 1 - Math.exp(-rate * dtHours);
    for (const p of this.packs) {
      if (p.gap <= 0) continue;
      for (let bi = 0; bi < p.count.length; bi++) {
        const gap = p.size[bi]! - p.count[bi]!;
        if (gap <= 0) continue;
        const expected = gap * share;
        const whole = Math.floor(expected);
        const n = Math.min(gap, whole + (this.rng.next() < expected - whole ? 1 : 0));
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
  private arrivals(perPack: number): void {
    if (!(perPack > 0)) return;
    const rng = this.rng;
    const packs = this.packs;
    for (let pi = 0; pi < packs.length; pi++) {
      const p = packs[pi]!;
      if (p.gap <= 0) continue;
      const count = p.count;
      const size = p.size;
      const nb = count.length;
      for (let k = rng.poisson(perPack); k > 0 && p.gap > 0; k--) {
        let x = rng.int(p.gap);
        let bi = 0;
        for (; bi < nb; bi++) {
          const g = size[bi]! - count[bi]!;
          if (g <= 0) continue;
          if (x < g) break;
          x -= g;
        }
        if (bi === nb) break; // cannot happen: the gap is the sum of the bands' gaps
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
      // Only a move of the pool's expected value by 0.5% (or the chase going) is worth a rescore.
      const ev = this.quickEv(p, now);
      const enough = p.changes > p.cardCount || Math.abs(ev - p.scoredEv) > 0.005 * Math.max(1, p.scoredEv);
      if (!(enough && due) && !p.mustRescore && drawableNow === p.wasDrawable && this.rowsCache) continue;
      let synced = p.ignored;
      const chase = this.chaseActive(p, now) ? p.t.chase : null;
      const rows: ScoreRow[] = [];
      let rescored = false;
      for (let r = 0; r < p.t.pools.length; r++) {
        const view = p.views[r]!;
        const drawableR = this.drawable(p, r, now);
        view.chase = chase;
        const old = p.riskRows[r];
        let row: ScoreRow | null;
        if (
          !p.mustRescore &&
          old !== undefined &&
          drawableR === (p.riskDrawable[r] === 1) &&
          (old === null || (old.decision.action !== 'open' && this.stillBelow(p, r, view)))
        )
          row = old;
        else {
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
      // Every row kept: nothing was looked at afresh, so the change detector keeps its baseline.
      if (!rescored) continue;
      p.rows = rows;
      p.changes = 0;
      p.scoredEv = ev;
      p.wasDrawable = drawableNow;
      p.mustRescore = false;
      changed = true;
    }
    // In pack order: decideOpen orders the rows itself (compareRows), so sorting here bought nothing.
    if (changed || !this.rowsCache) {
      // A loop, not flatMap (several times slower here).
      const all: ScoreRow[] = [];
      for (const p of this.packs) for (const row of p.rows) all.push(row);
      this.rowsCache = all;
    }
    if (due) this.rowsAt = now;
    this.forceRescore = false;
    return this.rowsCache;
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
    const mean = p.scorers[p.riskScorer[r]!]!.realizedMeanOf(view, p.count, p.esum);
    return mean < this.model.strategy.open.min_ev_ratio * price * (1 - 1e-6);
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
      for (let i = 0; i < p.count.length; i++) {
        const n = p.count[i]!;
        const o = n > 0 ? odds[i]! : 0;
        if (o <= 0) continue;
        w += o;
        acc += (o * p.sum[i]!) / n;
      }
      total += (chase ? pc * toCents(chase.card.market_value) : 0) + (w > 0 ? ((1 - pc) * acc) / w : 0);
    }
    return total;
  }

  nextRefreshAt(now: number): number {
    return Math.max(now + 1, this.rowsAt + this.rescoreMs);
  }

  private readonly undo: number[] = [];
  open(pool: number, qty: number, now: number, rng: Rng, out: Int32Array): number {
    const pi = this.poolPack[pool]!;
    const p = this.packs[pi];
    const modelPool = this.model.pools[pool]!;
    if (!p || !modelPool.body.available) return -1;
    const r = this.poolRisk[pool]!;
    this.undo.length = 0;
    for (let k = 0; k < qty; k++) {
      const got = this.draw(p, r, now, rng);
      if (got === -2) {
        // All or nothing (spec): the order fails, every pulled card goes back, nothing is charged.
        for (let j = this.undo.length - 2; j >= 0; j -= 2) {
          const id = this.undo[j]!;
          const b = this.undo[j + 1]!;
          if (id === -1) {
            p.chaseHit = false;
            this.openDirty = true;
          } else {
            if (p.ignored) this.counted(p, b, 0);
            else this.put(p, b, id);
            p.cardCount++;
          }
        }
        // The bot re-reads the pools after a refunded order (account-bot onFailed): so does this.
        this.forceRescore = true;
        p.mustRescore = true;
        return -1;
      }
      const chase = got === -1;
      this.undo.push(chase ? -1 : this.lastId, this.lastBand);
      const value = chase ? toCents(p.t.chase!.card.market_value) : got;
      const sealed = !chase && p.sealed[this.lastBand] === 1;
      out[k] = this.model.plans.planFor(value, sealed);
    }
    // A pack we just emptied is unavailable from now on: the bot would see it at once.
    if (!this.drawable(p, r, now)) this.forceRescore = true;
    return qty;
  }

  private indexOf(category: string): number {
    const c = CATEGORY_SLOT.get(category);
    return c === undefined ? 1 : this.index[c]!;
  }

  private valueNow(l: Listing): number {
    return roundHalfAway((l.basisCents * this.indexOf(l.category)) / l.anchorIndex);
  }

  list(l: Listing): void {
    l.anchorIndex = this.indexOf(l.category);
    l.outcome = 'pending';
  }

  private readonly listingView: ListingView = {
    priceCents: 0,
    listedAt: 0,
    marketValueCents: 0,
    basisValueCents: 0,
    lockedValueUntil: 0,
  };

  /** Replays `decideListing` at each due time; between decisions the market's fill hazard applies. */
  step(l: Listing, now: number): number {
    if (l.outcome === 'sold') return STEP_SOLD;
    const market = this.valueNow(l);
    // One view object for every step (decideListing only reads it).
    const v = this.listingView;
    v.priceCents = l.priceCents;
    v.listedAt = l.listedAt;
    v.marketValueCents = market;
    v.basisValueCents = l.basisCents;
    v.lockedValueUntil = l.pulledAt + LOCK_MS;
    const d = decideListing(v, this.model.strategy, now);
    if (d.action === 'delist_and_sell_back') {
      l.amountCents = this.holdValue(l, now);
      l.outcome = 'sold_back';
      return STEP_SOLD_BACK;
    }
    if (d.action === 'reprice') l.priceCents = d.priceCents;
    const until = d.action === 'keep' ? d.until : now;
    // Value moves on the tick, so the hazard is constant until the next tick or decision.
    const segmentEnd = Math.max(now + 1, Math.min(until, this.nextTick));
    const perDay = fillRatePerDay(
      l.priceCents,
      market,
      this.dyn.listing_fills_per_day_at_value,
      this.dyn.listing_price_sensitivity,
    );
    const soldAt = perDay > 0 ? now + this.rng.exponential(perDay) * DAY_MS : Number.POSITIVE_INFINITY;
    if (soldAt < segmentEnd) {
      l.eventAt = soldAt;
      l.outcome = 'sold';
      l.amountCents = l.priceCents - applyRate(l.priceCents, this.rules.seller_fee_rate);
    } else l.eventAt = segmentEnd;
    return STEP_CONTINUE;
  }

  holdValue(l: Listing, now: number): number {
    const basis = now <= l.pulledAt + LOCK_MS ? l.basisCents : this.valueNow(l);
    return applyRate(basis, now <= l.pulledAt + LOCK_MS ? this.rules.locked_rate : this.rules.market_rate);
  }
}
