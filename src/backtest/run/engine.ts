/**
 * The engine a worker (or the main thread) runs: builds the per-worker model once, then runs
 * ranges of paths. Results of a range are plain typed arrays so they cross thread boundaries
 * cheaply and are merged by path index, which keeps summaries independent of the worker count.
 */

import type { SnapshotFile } from '../../api/snapshot-schema.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import { type CardsSetup, cardsSetup } from '../path/cards-setup.js';
import { type BacktestModel, buildModel } from '../path/model.js';
import { runPath } from '../path/path.js';
import { cardWidth, type MarketKind, type PathResult, POOL_FIELDS, TOTALS } from '../path/path-io.js';
import type { PathMarket } from '../path/path-market.js';
import { MODEL_FIELDS, MODEL_POOL_FIELDS } from '../path/path-model.js';
import { StaticMarket, StaticRowsCache } from '../path/static-market.js';
import { DynamicMarket, type DynamicsInput, type WorldReuse } from '../world/dynamic-market.js';

export interface EngineSpec {
  snapshot: SnapshotFile;
  strategy: Strategy;
  days: number;
  seed: number;
  market: MarketKind;
  /** Starting balance in USD (default: the snapshot's account balance, else 10000). */
  balanceUsd?: number;
  /** Overrides of the world's dynamics rates (dynamic market only). */
  dynamics?: DynamicsInput;
  /** Paths keep their totals alone (`PathOptions.totalsOnly`): the optimizer's engines. */
  totalsOnly?: boolean;
}

export class Engine {
  readonly model: BacktestModel;
  /** Whether and how cards are backtested (null: the strategy buys no cards). */
  readonly cards: CardsSetup | null;
  private readonly staticRows: StaticRowsCache;

  constructor(readonly spec: EngineSpec) {
    this.model = buildModel(spec.snapshot, spec.strategy, {
      ...(spec.balanceUsd !== undefined ? { balanceUsd: spec.balanceUsd } : {}),
    });
    this.staticRows = new StaticRowsCache(this.model);
    this.cards = cardsSetup(spec.snapshot, spec.strategy, spec.market);
  }

  /** The last shared path's world, restarted for the next (`runPathShared` runs one path at a time). */
  private readonly worldReuse: WorldReuse = { world: null };

  marketFor(index: number): PathMarket {
    if (this.spec.market === 'static') return new StaticMarket(this.model, this.staticRows);
    return new DynamicMarket(this.model, this.spec.seed, index, this.spec.dynamics, this.cards);
  }

  /** `marketFor`, whose market's world is the previous shared path's, restarted: done when its path is. */
  private sharedMarketFor(index: number): PathMarket {
    if (this.spec.market === 'static') return new StaticMarket(this.model, this.staticRows);
    return new DynamicMarket(
      this.model,
      this.spec.seed,
      index,
      this.spec.dynamics,
      this.cards,
      this.worldReuse,
    );
  }

  /** Runs path `index`: a function of (spec, index) only. */
  runPath(index: number): PathResult {
    return this.runPathShared(index);
  }

  /** `runPath`, whose result's arrays may be reused by the next path (read at once). */
  runPathShared(index: number): PathResult {
    return runPath(this.model, this.sharedMarketFor(index), index, {
      days: this.spec.days,
      seed: this.spec.seed,
      cards: this.cards,
      ...(this.spec.totalsOnly ? { totalsOnly: true } : {}),
    });
  }
}

/** One range of paths, flattened: row k of each array belongs to path `from + k · step`. */
export interface ChunkResult {
  from: number;
  count: number;
  /** Distance between the range's path indexes (1: contiguous; N: every N-th path of a shard). */
  step: number;
  /** packs, spend, payout, listing, holdings, net, maxDd, ruined: 8 per path. */
  totals: Float64Array;
  /** (days + 1) per path. */
  equity: Float64Array;
  /** pools × 3 per path: packs, spend, value. */
  pools: Float64Array;
  /** Most packs opened on one UTC day, per path. */
  maxDaily: Float64Array;
  /** Card rows, `cardWidth` per path (empty when cards are not backtested). */
  cards: Float64Array;
  /** Expected vs realized sums: MODEL_FIELDS per path, and MODEL_POOL_FIELDS per pool per path. */
  model: Float64Array;
  modelPools: Float64Array;
}

/** Runs paths `from, from + step, …` below `to`. */
export function runChunk(
  engine: Engine,
  from: number,
  to: number,
  stop?: () => boolean,
  step = 1,
): ChunkResult {
  const days = engine.spec.days;
  const nPools = engine.model.pools.length;
  const n = Math.max(0, Math.ceil((to - from) / step));
  const totals = new Float64Array(n * TOTALS);
  const equity = new Float64Array(n * (days + 1));
  const pools = new Float64Array(n * nPools * POOL_FIELDS);
  const maxDaily = new Float64Array(n);
  const cw = cardWidth(engine.cards);
  const cards = new Float64Array(n * cw);
  const model = new Float64Array(n * MODEL_FIELDS);
  const mpw = nPools * MODEL_POOL_FIELDS;
  const modelPools = new Float64Array(n * mpw);
  let count = 0;
  for (let i = from; i < to; i += step) {
    if (stop?.()) break;
    const r = engine.runPathShared(i);
    const k = count;
    totals.set(
      [
        r.packs,
        r.spendCents,
        r.payoutCents,
        r.listingCents,
        r.holdingsCents,
        r.netPnlCents,
        r.maxDrawdownCents,
        r.ruined ? 1 : 0,
      ],
      k * TOTALS,
    );
    equity.set(r.equity, k * (days + 1));
    for (let p = 0; p < nPools; p++) {
      const o = (k * nPools + p) * POOL_FIELDS;
      pools[o] = r.poolPacks[p]!;
      pools[o + 1] = r.poolSpend[p]!;
      pools[o + 2] = r.poolValue[p]!;
      pools[o + 3] = r.poolExpected[p]!;
    }
    let m = 0;
    for (const v of r.packsByUtcDay) if (v !== undefined && v > m) m = v;
    maxDaily[k] = m;
    if (cw > 0) cards.set(r.cards, k * cw);
    model.set(r.model, k * MODEL_FIELDS);
    modelPools.set(r.modelPools, k * mpw);
    count++;
  }
  return {
    from,
    count,
    step,
    totals: totals.subarray(0, count * TOTALS),
    equity: equity.subarray(0, count * (days + 1)),
    pools: pools.subarray(0, count * nPools * POOL_FIELDS),
    maxDaily: maxDaily.subarray(0, count),
    cards: cards.subarray(0, count * cw),
    model: model.subarray(0, count * MODEL_FIELDS),
    modelPools: modelPools.subarray(0, count * mpw),
  };
}
