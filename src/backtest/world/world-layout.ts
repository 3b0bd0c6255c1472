/**
 * The dynamic market's world as laid out in memory, built once per model (a worker's paths start
 * from it): the snapshot's packs with their risk levels' bands merged (`packTemplates`), and every
 * pack's bands in one set of typed arrays (`worldStart`): sizes, the recorded cards as value ids,
 * each band's table of distinct values (value and expected realized value side by side) and its
 * value grid for generated cards, with the pack's incremental scorers holding the recorded cards.
 * A path copies the arrays it changes (world-pools.ts) and shares the rest.
 */
import type { Band, PackPool, PoolCard } from '../../api/schemas.js';
import { toCents } from '../../core/money.js';
import { IncrementalScorer } from '../../strategy/incremental-score.js';
import { excludedBy } from '../../strategy/score.js';
import type { BacktestModel } from '../path/model.js';
import { valueGrid } from './value-grid.js';

export interface BandTemplate {
  band: Band;
  minCents: number;
  maxCents: number;
  sealed: boolean;
  odds: Map<string, number>;
  cards: PoolCard[];
  /** Recorded size: listed cards plus unseen ones (hittable_cards beyond the listed). */
  size: number;
}

export interface PackTemplate {
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

/**
 * By snapshot object: the templates are a function of the model's pools, which buildModel takes
 * from the snapshot alone (no strategy), and are never written, so the engines a worker builds
 * from one snapshot (one per candidate in a search) share them.
 */
const templates = new WeakMap<BacktestModel['snapshot'], PackTemplate[]>();

export function packTemplates(model: BacktestModel): PackTemplate[] {
  const cached = templates.get(model.snapshot);
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
  templates.set(model.snapshot, list);
  return list;
}

/** A pack's constant parts, built once per model: paths start from them (fields as in PackState, world-pools.ts). */
export interface PackStart {
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
export interface WorldStart extends WorldBands {
  packs: PackStart[];
  /**
   * Per value (the entry of `idTerms` / 2): its pull plan in the model's `plans` (NO_PLAN until
   * first asked): a card's plan is one array read, not a look-up by value. Shared by a worker's
   * paths and filled as they ask (a value's plan is the same on every path).
   */
  idPlan: Int32Array;
}

/** `idPlan` of a value whose plan was not asked for yet. */
export const NO_PLAN = -1;

/** WorldStart's typed arrays (a pack's blocks of them while it is built). */
export interface WorldBands {
  /** Per band: its recorded size (what restock fills it back to). */
  size: Int32Array;
  /** Per band: where its cards start in `ids`, and their room there. */
  off: Int32Array;
  cap: Int32Array;
  /** Per band: 1 if its cards are sealed packs (the consolation band). */
  sealed: Uint8Array;
  /**
   * Per band: where its values start in `idTerms`, whose entries 2·(valOff + id) and the next hold
   * the value (cents) and the expected realized value of value id `id` (one cache line per card
   * change). Ids are the same in every scorer of a pack.
   */
  valOff: Int32Array;
  idTerms: Float64Array;
  /** Per band: the ids a generated card can take (its value grid): `gridId[gridOff + k]`, k < `gridLen`. */
  gridOff: Int32Array;
  gridLen: Int32Array;
  gridId: Int32Array;
  /** The recorded cards: ids by position, and per band count, Σ value, Σ expected realized value. */
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

export function worldStart(model: BacktestModel): WorldStart {
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
  const bandArrays = concatBands(blocks);
  const idPlan = new Int32Array(bandArrays.idTerms.length / 2).fill(NO_PLAN);
  const start: WorldStart = { packs, ...bandArrays, idPlan };
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
