/**
 * The world's packs on one path: every pack's cards by position in its bands (the band store,
 * laid out as world-layout.ts says), changed by our pulls, other users' openings, card arrivals
 * and the simulator's band refill, with a chase that is gone once hit. Each event's law is
 * src/strategy/market-laws.ts's; this keeps the data and the loops (docs/backtest-engine.md): a
 * tick's openings are drawn from their joint law, each only as a take
 * of a known card or a new one, its arrivals and refill only counted; which known cards left and
 * the new cards' values are drawn band by band when the packs are read (`settle`). The tick that
 * drives these is the dynamic market's (dynamic-market.ts), at the next read.
 */
import { toCents } from '../../core/money.js';
import { Rng } from '../../core/prng.js';
import type { Dynamics } from '../../market/world-schema.js';
import {
  bandGap,
  othersOpeningShares,
  pickByGapFlat,
  pickRunning,
  poissonCount,
  pullsChase,
  refillCount,
  refillShare,
} from '../../strategy/market-laws.js';
import type { BacktestModel } from '../path/model.js';
import type { DrawParts } from '../path/path-market.js';
import { addDrawn, clearDrawParts } from '../path/path-model.js';
import { ACT_HOLD, ACT_SELL, type PullPlans } from '../path/pull-plans.js';
import { OthersLaw } from './others-law.js';
import {
  DRAW_CHASE,
  DRAW_NOTHING,
  NO_BAND,
  NO_CARD,
  NO_PACK,
  NO_RISK_LEVEL,
  newPackState,
  type PackState,
  rebuildRunningOdds,
  resetPackState,
} from './pack-state.js';
import { packTemplates } from './pack-templates.js';
import { NO_PLAN, type WorldStart, worldStart } from './world-layout.js';

export { DRAW_CHASE, DRAW_NOTHING, NO_BAND, NO_CARD, type PackState };

/** Salt of the world's random stream, apart from the path's own and the value drift's. */
const WORLD_STREAM_SALT = 0x6d2b79f5;

/** The world's own stream of a path: separate from the path's draws so one cannot shift the other. */
function worldStream(seed: number, pathIndex: number): Rng {
  return new Rng((seed ^ WORLD_STREAM_SALT) >>> 0).fork(pathIndex);
}

export class WorldPools {
  /** The world's draws: other users' openings, arrivals, refills, generated cards' values (a new stream per path). */
  rng: Rng;
  /** Every pack's state, in `packTemplates` order. */
  readonly packs: PackState[];
  /** Model pool index → pack (NO_PACK: none), and position of its risk level in the pack's pools. */
  readonly poolPack: Int32Array;
  readonly poolRisk: Int32Array;
  /** The law of other users' openings (others-law.ts), told here when it changes. */
  private others = new OthersLaw();
  /** Per market band: its pack (index into `packs`). */
  private readonly bandPack: Int32Array;
  /**
   * Cards are known (a value id in `ids`) or not yet (`settle`): between two reads of the world,
   * per market band, `taken` of its known cards went to other users, which ones not yet drawn,
   * and `fresh` new cards (arrivals, refill) are counted whose values are not drawn yet; `count`
   * is always the band's live count. The bands with either (the first `queuedCount`, flagged).
   */
  private readonly taken: Int32Array;
  private readonly fresh: Int32Array;
  private readonly queued: Int32Array;
  private readonly isQueued: Uint8Array;
  private queuedCount = 0;
  // Every pack's bands, one entry per band of all packs (pack p's at p.b0 … p.b0 + p.nb − 1, see
  // WorldStart). This path's own, changed by card changes:
  /** Per band: its number of cards. */
  readonly count: Int32Array;
  /** Per band: Σ value (cents, exact integers: the band mean without a scan). */
  readonly sum: Float64Array;
  /** Per band: running Σ expected realized value. */
  private readonly esum: Float64Array;
  /** Per band: a change counter, and its value when the scorers last had the band (`sync`). */
  private readonly ver: Int32Array;
  private readonly synced: Int32Array;
  /** Per band: other users' running P(band) over the pack's bands (`rebuildCum`). */
  private readonly mixCum: Float64Array;
  /** The cards: value ids by position, band g's from `off[g]`. */
  private readonly ids: Int32Array;
  /** Per band: its block of `ids` (made when first handed to the scorers, `sync`). */
  private readonly bandIds: (Int32Array | undefined)[] = [];
  // Shared by a worker's paths, never written (WorldBands says what each holds):
  private readonly size: Int32Array;
  private readonly off: Int32Array;
  private readonly cap: Int32Array;
  readonly sealed: Uint8Array;
  private readonly valOff: Int32Array;
  private readonly idTerms: Float64Array;
  private readonly gridOff: Int32Array;
  private readonly gridLen: Int32Array;
  private readonly gridId: Int32Array;
  private readonly idPlan: Int32Array;
  /** The model's pull plans (`planOf`). */
  private readonly plans: PullPlans;

  constructor(
    private readonly model: BacktestModel,
    /** The world's rates (the band refill's). */
    private readonly dyn: Dynamics,
    seed: number,
    pathIndex: number,
  ) {
    const tpl = packTemplates(model);
    const w = worldStart(model);
    // Made at their sizes here, filled from the recorded start by `begin` (as at every restart).
    this.count = new Int32Array(w.count.length);
    this.sum = new Float64Array(w.sum.length);
    this.esum = new Float64Array(w.esum.length);
    this.ver = new Int32Array(w.count.length);
    this.synced = new Int32Array(w.count.length);
    this.mixCum = new Float64Array(w.count.length);
    this.ids = new Int32Array(w.ids.length);
    this.size = w.size;
    this.off = w.off;
    this.cap = w.cap;
    this.sealed = w.sealed;
    this.valOff = w.valOff;
    this.idTerms = w.idTerms;
    this.gridOff = w.gridOff;
    this.gridLen = w.gridLen;
    this.gridId = w.gridId;
    this.idPlan = w.idPlan;
    this.plans = model.plans;
    this.bandPack = new Int32Array(w.count.length);
    w.packs.forEach((st, pi) => {
      this.bandPack.fill(pi, st.b0, st.b0 + tpl[pi]!.bands.length);
    });
    this.taken = new Int32Array(w.count.length);
    this.fresh = new Int32Array(w.count.length);
    this.queued = new Int32Array(w.count.length);
    this.isQueued = new Uint8Array(w.count.length);
    this.poolPack = new Int32Array(model.pools.length).fill(NO_PACK);
    this.poolRisk = new Int32Array(model.pools.length).fill(NO_RISK_LEVEL);
    this.packs = tpl.map((t, pi) => {
      t.pools.forEach((p, r) => {
        this.poolPack[p.index] = pi;
        this.poolRisk[p.index] = r;
      });
      return newPackState(t, w.packs[pi]!, this.count, this.esum);
    });
    this.rng = worldStream(seed, pathIndex);
    this.begin(w);
  }

  /**
   * This world at the start of path `pathIndex` again, for a worker that runs its paths one after
   * the other (the engine's `runPathShared`): the same state as a new WorldPools of the same model
   * and rates, in the arrays it has (a path made ~440 KB of them).
   */
  restart(model: BacktestModel, dyn: Dynamics, seed: number, pathIndex: number): WorldPools {
    if (model !== this.model || dyn !== this.dyn) return new WorldPools(model, dyn, seed, pathIndex);
    const w = worldStart(model);
    this.others = new OthersLaw();
    for (let pi = 0; pi < this.packs.length; pi++) resetPackState(this.packs[pi]!, w.packs[pi]!);
    this.rng = worldStream(seed, pathIndex);
    this.begin(w);
    return this;
  }

  /**
   * The path's start in this world's arrays, new or used: the recorded cards and sums, the rest
   * at zero, then each pack's start (the path's stream and pack states set).
   */
  private begin(w: WorldStart): void {
    this.count.set(w.count);
    this.sum.set(w.sum);
    this.esum.set(w.esum);
    this.ids.set(w.ids);
    this.synced.fill(0);
    this.mixCum.fill(0);
    this.taken.fill(0);
    this.fresh.fill(0);
    this.isQueued.fill(0);
    this.queuedCount = 0;
    // Versions start ahead of what the scorers have: every band is handed over at its first row.
    this.ver.fill(1);
    for (const p of this.packs) this.startPack(p);
  }

  /** Pack p at the start of a path: its recorded cards, and its truncated bands filled. */
  private startPack(p: PackState): void {
    const nb = p.nb;
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
  }

  /** A new card in band bi of pack p, its value drawn uniformly from the band's value grid. */
  private newCard(p: PackState, bi: number): void {
    const g = p.b0 + bi;
    // An ignored pack keeps no cards: no value is drawn for it.
    this.put(p, bi, p.ignored ? NO_CARD : this.gridId[this.gridOff[g]! + this.rng.int(this.gridLen[g]!)]!);
  }

  /** Pack p's running odds and other users' mixture, afresh (`rebuildRunningOdds`). */
  private rebuildCum(p: PackState): void {
    rebuildRunningOdds(p, this.count, this.mixCum);
  }

  /** Pack p's running odds and live shares as its bands are now (rebuilt if a band emptied or refilled). */
  freshOdds(p: PackState): void {
    if (p.cumDirty) this.rebuildCum(p);
  }

  /** Band bi of pack p went from empty to not (+1) or back (−1). */
  private liveChange(p: PackState, bi: number, d: number): void {
    this.others.invalidate();
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

  /** The pull law `open` draws from now: the chase, else a band by live odds, a card uniformly. */
  drawParts(pool: number, now: number, out: DrawParts, plans: PullPlans): void {
    clearDrawParts(out);
    const p = this.packs[this.poolPack[pool]!];
    if (!p || p.ignored) return;
    const r = this.poolRisk[pool]!;
    let rest = 1;
    if (this.chaseActive(p, now)) {
      rest = 1 - p.chaseP;
      addDrawn(out, plans, plans.planFor(toCents(p.t.chase!.card.market_value), false), p.chaseP);
    }
    if (p.cumDirty) this.rebuildCum(p);
    const total = p.cumTotal[r]!;
    if (!(total > 0)) return;
    let below = 0;
    // `addDrawn` card by card, its four sums kept in locals (the same additions in the same
    // order): as fields of `out` each card's additions went through memory.
    let sellMean = out.sellMean;
    let sellM2 = out.sellM2;
    let heldMean = out.heldMean;
    let heldM2 = out.heldM2;
    for (let bi = 0; bi < p.nb; bi++) {
      const cum = p.cum[r * p.nb + bi]!;
      const g = p.b0 + bi;
      const n = this.count[g]!;
      const each = (rest * (cum - below)) / total / n;
      below = cum;
      if (!(each > 0)) continue;
      const at = this.off[g]!;
      for (let k = 0; k < n; k++) {
        // The plans' arrays read after `planOf`, which may add a plan (and grow them).
        const j = this.planOf(g, this.ids[at + k]!);
        const a = plans.amount[j]!;
        const act = plans.action[j];
        if (act === ACT_SELL) {
          sellMean += each * a;
          sellM2 += each * a * a;
        } else if (act === ACT_HOLD) {
          heldMean += each * a;
          heldM2 += each * a * a;
        }
      }
    }
    out.sellMean = sellMean;
    out.sellM2 = sellM2;
    out.heldMean = heldMean;
    out.heldM2 = heldM2;
  }

  /** The pull plan (index into the model's `plans`) of the card with value id `id` in market band g. */
  planOf(g: number, id: number): number {
    if (id === NO_CARD) return this.plans.planFor(0, this.sealed[g] === 1);
    const v = this.valOff[g]! + id;
    let j = this.idPlan[v]!;
    if (j === NO_PLAN) {
      j = this.plans.planFor(this.idTerms[2 * v]!, this.sealed[g] === 1);
      this.idPlan[v] = j;
    }
    return j;
  }

  /** Value (cents) of the card with value id `id` in market band g (0 for NO_CARD). */
  valueOf(g: number, id: number): number {
    return id === NO_CARD ? 0 : this.idTerms[2 * (this.valOff[g]! + id)]!;
  }

  /**
   * Gives the pack's scorers the cards of every band that changed since they last had them: lent
   * where they are in `ids` (`viewBand`, no copy); any change bumps the band's version, so a
   * scorer is handed the band again before it reads it.
   */
  sync(p: PackState): void {
    const scorers = p.scorers;
    for (let bi = 0; bi < p.nb; bi++) {
      const g = p.b0 + bi;
      if (this.ver[g] === this.synced[g]) continue;
      let view = this.bandIds[g];
      if (view === undefined) {
        view = this.ids.subarray(this.off[g]!, this.off[g]! + this.cap[g]!);
        this.bandIds[g] = view;
      }
      for (let i = 0; i < scorers.length; i++) scorers[i]!.viewBand(bi, view, this.count[g]!);
      this.synced[g] = this.ver[g]!;
    }
  }

  /** The chase is pulled: gone for everyone, and always worth a rescore. */
  private hitChase(p: PackState): void {
    p.chaseHit = true;
    this.others.invalidate();
    p.changes += p.cardCount + 1;
  }

  chaseActive(p: PackState, now: number): boolean {
    return p.chaseP > 0 && !p.chaseHit && now < p.chaseEndsAt;
  }

  /** Whether pack p can be drawn at risk level r (position in its pools). */
  drawable(p: PackState, r: number, now: number): boolean {
    return p.live[r]! > 0 || this.chaseActive(p, now);
  }

  /**
   * Where one pull from pack p at risk level r comes from: the chase (DRAW_CHASE, hit at once), else
   * a band by renormalised odds (its index in the pack), or DRAW_NOTHING when nothing can be drawn.
   * The caller then takes a card of the band uniformly (`pullFrom`).
   */
  drawBand(p: PackState, r: number, now: number, rng: Rng): number {
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
  pullFrom(p: PackState, bi: number, rng: Rng): number {
    // An ignored pack keeps no cards, so no position is drawn (takeAt does not read it).
    const id = this.takeAt(p, bi, p.ignored ? 0 : rng.int(this.count[p.b0 + bi]!));
    p.changes++;
    p.cardCount--;
    return id;
  }

  /** Other users' opening shares of pack p at `at` (the law's rebuild, others-law.ts). */
  sharesOf(p: PackState, open: number, at: number): Float64Array {
    if (p.cumDirty) this.rebuildCum(p);
    const chaseP = this.chaseActive(p, at) ? p.chaseP : 0;
    return othersOpeningShares(open, chaseP, this.mixCum, p.b0, p.nb);
  }

  /**
   * `n` other users' openings at `at`, one after the other by the law of one opening (pack by
   * popularity among those open to them, the chase, then risk level and band: one draw from
   * their joint law, `othersOpeningShares`). Which card of its band an opening takes (uniformly)
   * changes no other opening's law: only whether it is a known card or a new one is drawn now,
   * which known card when the world is next read (`settle`). A take that empties a band (or a
   * chase hit) changes the law (`liveChange`, `hitChase` mark it).
   */
  otherOpenings(n: number, at: number): void {
    const rng = this.rng;
    const count = this.count;
    const others = this.others;
    for (let i = 0; i < n; i++) {
      const alias = others.at(at, this);
      if (alias === null) break;
      const e = alias.draw(rng);
      const g = others.band[e]!;
      if (g !== NO_BAND) {
        const p = this.packs[this.bandPack[g]!]!;
        const k = count[g]!;
        // A uniform card of the band: one of its known ones, or one of its new ones. Counted
        // without a branch (known: 1 when the draw falls below the known cards, the sign bit of
        // a small int difference): the outcome is a coin flip a branch would mispredict.
        if (!p.ignored) {
          const fresh = this.fresh[g]!;
          const known = (rng.int(k) - (k - fresh)) >>> 31;
          this.taken[g] = this.taken[g]! + known;
          this.fresh[g] = fresh - 1 + known;
          this.queue(g);
        }
        count[g] = k - 1;
        if (k <= this.size[g]!) p.gap++;
        p.changes++;
        p.cardCount--;
        if (k === 1) this.liveChange(p, g - p.b0, -1);
        continue;
      }
      const c = others.chase[e]!;
      if (c !== NO_PACK) this.hitChase(this.packs[c]!);
    }
  }

  private queue(g: number): void {
    if (this.isQueued[g] === 1) return;
    this.isQueued[g] = 1;
    this.queued[this.queuedCount++] = g;
  }

  /**
   * A tick's restock of every pack with a gap: its card arrivals (a Poisson count of mean
   * `ratePerHour` · dt, each into a band drawn in proportion to the band's gap; arrivals to a full
   * pack are lost, as in the simulator's `arrival`), then the simulator's band refill
   * (src/market/dynamics.ts `restock`: each band regains the share 1 − e^(−rate·dt) of its gap,
   * rounded stochastically, so the backtest restocks as fast as `packbot sim`). Only counted: the
   * new cards' values (uniform on the band's grid, independent of everything else) are drawn when
   * the world is next read, for the cards still there (`settle`).
   */
  restock(ratePerHour: number, dtHours: number): void {
    const share = refillShare(this.dyn.restock_fraction_per_hour, dtHours);
    const rng = this.rng;
    const packs = this.packs;
    const count = this.count;
    const size = this.size;
    const fresh = this.fresh;
    for (let pi = 0; pi < packs.length; pi++) {
      const p = packs[pi]!;
      if (p.gap <= 0) continue;
      const b0 = p.b0;
      const nb = p.nb;
      const cards = p.cardCount;
      if (ratePerHour > 0)
        for (let k = poissonCount(ratePerHour, dtHours, rng); k > 0 && p.gap > 0; k--) {
          const bi = pickByGapFlat(rng.int(p.gap), size, count, b0, nb);
          if (bi >= nb) break; // cannot happen: the gap is the sum of the bands' gaps
          this.added(p, b0 + bi, 1);
        }
      if (share > 0)
        for (let g = b0; g < b0 + nb; g++) {
          const n = count[g]!;
          const gap = bandGap(size[g]!, n);
          if (gap === 0) continue;
          // `added` without a branch on r: 0 or more cards by a coin flip, which a branch mispredicts.
          const r = refillCount(gap, share, rng);
          count[g] = n + r;
          if (!p.ignored) fresh[g] = fresh[g]! + r;
          p.gap -= r;
          p.cardCount += r;
          if (n === 0 && r > 0) this.liveChange(p, g - b0, 1);
        }
      p.changes += p.cardCount - cards;
      // A band with new cards not queued yet got them in this call (settle empties the queue
      // and every count of new cards): nothing added, nothing to queue.
      if (!p.ignored && p.cardCount !== cards)
        for (let g = b0; g < b0 + nb; g++) if (fresh[g]! > 0) this.queue(g);
    }
  }

  /** `k` new cards counted into market band g of pack p (their values drawn by `settle`). */
  private added(p: PackState, g: number, k: number): void {
    const n = this.count[g]!;
    this.count[g] = n + k;
    if (!p.ignored) this.fresh[g] = this.fresh[g]! + k;
    p.gap -= k;
    p.cardCount += k;
    if (n === 0) this.liveChange(p, g - p.b0, 1);
  }

  /**
   * Makes every card known, for a read of the world (rows, our orders): per band, the known cards
   * other users took since the last read, each uniform among the known ones left, and the values
   * of the new cards still there, each uniform on the band's grid. The same law as drawing each
   * card when it is taken or arrives: known cards are alike to the draws in between (only counts
   * steer them), and a new card's value is independent of everything, so whether a take hit a
   * known or a new card is all that had to be drawn at once.
   */
  settle(): void {
    const rng = this.rng;
    const ids = this.ids;
    const terms = this.idTerms;
    for (let q = 0; q < this.queuedCount; q++) {
      const g = this.queued[q]!;
      this.isQueued[g] = 0;
      const k = this.taken[g]!;
      const m = this.fresh[g]!;
      this.taken[g] = 0;
      this.fresh[g] = 0;
      if (k === 0 && m === 0) continue;
      const n = this.count[g]!;
      const at = this.off[g]!;
      const vo = this.valOff[g]!;
      let value = 0;
      let expected = 0;
      // The known cards are ids[at .. at + n + k − m): k of them leave (the last takes the place).
      let left = n + k - m;
      for (let j = 0; j < k; j++) {
        const pos = rng.int(left);
        left--;
        const id = ids[at + pos]!;
        ids[at + pos] = ids[at + left]!;
        value -= terms[2 * (vo + id)]!;
        expected -= terms[2 * (vo + id) + 1]!;
      }
      const go = this.gridOff[g]!;
      const gl = this.gridLen[g]!;
      for (let j = left; j < n; j++) {
        const id = this.gridId[go + rng.int(gl)]!;
        ids[at + j] = id;
        value += terms[2 * (vo + id)]!;
        expected += terms[2 * (vo + id) + 1]!;
      }
      this.ver[g] = this.ver[g]! + 1;
      this.sum[g] = this.sum[g]! + value;
      // Back to an exact zero when the band empties: the running sum never drifts far.
      this.esum[g] = n === 0 ? 0 : this.esum[g]! + expected;
    }
    this.queuedCount = 0;
  }

  /** A card an order took goes back when the order fails (band NO_BAND: the chase, given back). */
  putBack(p: PackState, bi: number, id: number): void {
    if (bi === NO_BAND) {
      p.chaseHit = false;
      this.others.invalidate();
    } else {
      this.put(p, bi, id);
      p.cardCount++;
    }
  }
}
