/**
 * The dynamic market's world as laid out in memory, built once per model (a worker's paths start
 * from it): every pack's bands in one set of typed arrays (`worldStart`): sizes, the recorded
 * cards as value ids, each band's table of distinct values (value and expected realized value
 * side by side) and its value grid for generated cards, with the pack's incremental scorers
 * holding the recorded cards. What no strategy changes is the snapshot's (band-layout.ts, shared
 * by a worker's engines); a path copies the arrays it changes (world-pools.ts) and shares the rest.
 */
import type { PackPool } from '../../api/schemas.js';
import { toCents } from '../../core/money.js';
import { IncrementalScorer } from '../../strategy/incremental-score.js';
import { excludedBy } from '../../strategy/score.js';
import type { BacktestModel } from '../path/model.js';
import { type BandLayout, bandLayout, type SharedBands } from './band-layout.js';
import { type PackTemplate, packTemplates } from './pack-templates.js';

/** The pool a risk level's scorer stands for: its recorded body with the pack's merged bands. */
function scorerTemplate(t: PackTemplate, x: PackTemplate['pools'][number]): PackPool {
  return {
    ...x.body,
    bands: t.bands.map((b) => ({ ...b.band, odds: b.odds.get(x.risk) ?? 0 })),
    cards: [],
    total_cards: 0,
  };
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

/** WorldStart's typed arrays: the snapshot's (SharedBands) and those the strategy decides. */
export interface WorldBands extends SharedBands {
  /**
   * Per value (valOff + id): entries 2·(valOff + id) and the next hold the value (cents) and the
   * expected realized value of value id `id` (one cache line per card change).
   */
  idTerms: Float64Array;
  /** Per band: Σ expected realized value of its recorded cards. */
  esum: Float64Array;
}

const starts = new WeakMap<BacktestModel, WorldStart>();

export function worldStart(model: BacktestModel): WorldStart {
  const cached = starts.get(model);
  if (cached) return cached;
  const layout = bandLayout(model);
  const idTerms = new Float64Array(2 * layout.values.length);
  const esum = new Float64Array(layout.count.length);
  let b0 = 0;
  const packs = packTemplates(model).map((t): PackStart => {
    const { scorers, riskScorer } = packScorers(t, model.strategy, layout, b0);
    strategyTerms(layout, b0, t.bands.length, scorers[0]!, idTerms, esum);
    const excluded = Uint8Array.from(t.pools, (x) => (excludedBy(x.body, model.strategy) !== null ? 1 : 0));
    const start: PackStart = {
      ignored: excluded.every((x) => x === 1),
      excluded,
      b0,
      odds: t.pools.map((x) => Float64Array.from(t.bands, (b) => b.odds.get(x.risk) ?? 0)),
      standard: t.pools.findIndex((x) => x.risk === 'standard'),
      views: t.pools.map((x) => scorerTemplate(t, x)),
      scorers,
      riskScorer,
    };
    b0 += t.bands.length;
    return start;
  });
  const idPlan = new Int32Array(layout.values.length).fill(NO_PLAN);
  // The layout's arrays as they are (shared by every engine of the snapshot), and this model's.
  const start: WorldStart = { ...layout, packs, idTerms, esum, idPlan };
  starts.set(model, start);
  return start;
}

/**
 * A pack's scorers, one per distinct price, and each risk level's (index in `scorers`): each band
 * numbered as the layout numbers its values (the same ids in every scorer), holding its recorded
 * cards.
 */
function packScorers(
  t: PackTemplate,
  strategy: BacktestModel['strategy'],
  layout: BandLayout,
  b0: number,
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
      const s = new IncrementalScorer(scorerTemplate(t, x), strategy);
      for (let bi = 0; bi < t.bands.length; bi++) {
        const g = b0 + bi;
        const from = layout.valOff[g]!;
        s.numberValues(bi, layout.values.subarray(from, from + layout.valLen[g]!));
        for (let k = 0; k < layout.count[g]!; k++) s.addId(bi, layout.ids[layout.off[g]! + k]!);
      }
      scorers.push(s);
    }
    riskScorer[r] = i;
  });
  return { scorers, riskScorer };
}

/**
 * The pack's part of `idTerms` (each value and its expected realized value by `scorer`) and of
 * `esum` (per band, Σ over its recorded cards in position order).
 */
function strategyTerms(
  layout: BandLayout,
  b0: number,
  nb: number,
  scorer: IncrementalScorer,
  idTerms: Float64Array,
  esum: Float64Array,
): void {
  for (let bi = 0; bi < nb; bi++) {
    const g = b0 + bi;
    const from = layout.valOff[g]!;
    for (let id = 0; id < layout.valLen[g]!; id++) {
      idTerms[2 * (from + id)] = layout.values[from + id]!;
      idTerms[2 * (from + id) + 1] = scorer.expectedOf(bi, id);
    }
    let e = 0;
    for (let k = 0; k < layout.count[g]!; k++) e += scorer.expectedOf(bi, layout.ids[layout.off[g]! + k]!);
    esum[g] = e;
  }
}
