/**
 * When the dynamic market's pools are rescored. Rows answer for the pools as the world has them at
 * the decision that reads them: a pack is rescored at any read when its contents' expected value
 * moved (our own orders, other users' openings, restock), its chase went or its drawability
 * changed, whenever that happened; a risk level whose last row is a wait that must still wait
 * keeps it. `rescore_minutes` only spaces the decisions of a path that waits without a time to
 * wait for (`nextRefreshAt`), like a bot that refreshes its catalog a few times an hour. Rows come
 * from the packs' incremental scorers, handed the bands that changed (docs/backtest.md, "Markets";
 * docs/backtest-engine.md).
 */
import type { PackPool } from '../../api/schemas.js';
import { liveRealizedMean } from '../../strategy/incremental-score.js';
import { pullEvOfLevels } from '../../strategy/market-laws.js';
import type { ScoreContext, ScoreRow } from '../../strategy/score.js';
import type { BacktestModel } from '../path/model.js';
import type { PackState, WorldPools } from './world-pools.js';

/** A pack is rescored when its quick EV moves by more than this share of the last one (taken as ≥ 1 cent). */
const RESCORE_EV_MOVE = 0.005;
/** `stillBelow`'s margin: a mean this close under the threshold is rescored to be sure. */
const STILL_BELOW_MARGIN = 1e-6;
/** `rescorePack`'s answers: every row stood; rows were due but none changed; rows made afresh. */
const NOTHING_SEEN = 0;
const LOOKED = 1;
const ROWS_CHANGED = 2;

export class Rescorer {
  /** The rows last returned by `rows`, and when the last rescore interval began. */
  private rowsCache: readonly ScoreRow[] | null = null;
  private rowsAt = Number.NEGATIVE_INFINITY;
  /** Rescore at the next `rows` whatever the interval (a pack emptied, an order was refunded). */
  forceRescore = true;
  /**
   * Keep a due wait row whose decision is proven to stay a wait (`waitStands`); false: make every
   * due row afresh (tests compare the two).
   */
  proveWaits = true;
  /** Rows made afresh so far (a statistic for tests and profiles). */
  rowsBuilt = 0;
  /** `unread` was called: no row may be asked for again (the packs may have stopped moving). */
  private retired = false;
  /** The world's packs and per-band counts and Σ values (world-pools.ts), read here. */
  private readonly packs: PackState[];
  private readonly count: Int32Array;
  private readonly sum: Float64Array;
  /** `quickEv`'s scratch: a pack's band means. */
  private readonly means: Float64Array;

  constructor(
    private readonly model: BacktestModel,
    private readonly world: WorldPools,
    /** Least time between two rescores of a pack (`rescore_minutes`). */
    private readonly rescoreMs: number,
  ) {
    this.packs = world.packs;
    this.count = world.count;
    this.sum = world.sum;
    let bands = 0;
    for (const p of this.packs) bands = Math.max(bands, p.nb);
    this.means = new Float64Array(bands);
  }

  /**
   * The rows `scorePools` would give on the pools as they are now, up to the change detector's
   * tolerance: a pack is rescored when its contents' expected value moved by 0.5% since it was
   * last scored (or more cards changed than it holds, or the chase went, or it became empty or
   * drawable again), however little time passed and whoever moved it; other packs keep their rows.
   * Rows come from the packs' incremental scorers.
   */
  rows(balanceCents: number, now: number): readonly ScoreRow[] {
    if (this.retired) throw new Error('dynamic market: rows asked for after rowsUnread');
    if (this.rowsCache && !this.forceRescore && !this.anyPackMoved(now)) {
      this.moveInterval(now);
      return this.rowsCache;
    }
    let changed = this.rowsCache === null;
    const ctx = { balanceCents, maxQuantity: this.model.maxQuantity };
    for (const p of this.packs) {
      // Excluded packs are scored once (their rows wait, "excluded by the strategy", for good).
      if (p.ignored && p.riskRows[0] !== undefined && this.rowsCache) continue;
      const chaseNow = this.world.chaseActive(p, now);
      if (this.rowsCache && !p.mustRescore && p.changes === p.lookedChanges && chaseNow === p.lookedChase)
        continue;
      let drawableNow = false;
      for (let r = 0; r < p.t.pools.length; r++) if (this.world.drawable(p, r, now)) drawableNow = true;
      // Only a move of the pool's expected value by RESCORE_EV_MOVE (or the chase going) is worth a rescore.
      const ev = this.quickEv(p, now);
      const enough =
        p.changes > p.cardCount || Math.abs(ev - p.scoredEv) > RESCORE_EV_MOVE * Math.max(1, p.scoredEv);
      p.lookedChase = chaseNow;
      if (!enough && !p.mustRescore && drawableNow === p.wasDrawable && this.rowsCache) {
        p.lookedChanges = p.changes;
        continue;
      }
      // Every row kept: nothing was looked at afresh, so the change detector keeps its baseline.
      const seen = this.rescorePack(p, now, ctx);
      if (seen !== NOTHING_SEEN) {
        p.changes = 0;
        p.scoredEv = ev;
        p.wasDrawable = drawableNow;
        p.mustRescore = false;
        if (seen === ROWS_CHANGED) changed = true;
      }
      p.lookedChanges = p.changes;
    }
    // In pack order: decideOpen orders the rows itself (compareRows).
    if (changed || !this.rowsCache) {
      const all: ScoreRow[] = [];
      for (const p of this.packs) for (const row of p.rows) all.push(row);
      this.rowsCache = all;
    }
    this.moveInterval(now);
    this.forceRescore = false;
    return this.rowsCache;
  }

  /**
   * Whether some pack's cards changed since it was last looked at, or its chase ended: only then
   * can a row differ from the pools as they are.
   */
  private anyPackMoved(now: number): boolean {
    for (const p of this.packs) {
      if (p.ignored) continue;
      if (p.mustRescore || p.changes !== p.lookedChanges || this.world.chaseActive(p, now) !== p.lookedChase)
        return true;
    }
    return false;
  }

  /** The waiting decisions' interval: a read starts a new one once the last one has passed. */
  private moveInterval(now: number): void {
    if (now >= this.rowsAt + this.rescoreMs) this.rowsAt = now;
  }

  /**
   * Pack p's rows afresh where a decision can change. Returns NOTHING_SEEN when every row stands
   * by the change detector's rule (`rowStands`: nothing is looked at afresh, the detector keeps its
   * baseline); else LOOKED (the baseline moves, as whenever a row was due) or, when some row was
   * made afresh, ROWS_CHANGED (`p.rows` set). A due wait row whose decision is proven to stay a
   * wait (`provenWait`) keeps its row: its reason and numbers are older, its action the same.
   */
  private rescorePack(p: PackState, now: number, ctx: ScoreContext): number {
    let synced = p.ignored;
    const chase = this.world.chaseActive(p, now) ? p.t.chase : null;
    let looked = false;
    let rebuilt = false;
    for (let r = 0; r < p.t.pools.length; r++) {
      const view = p.views[r]!;
      const drawableR = this.world.drawable(p, r, now);
      view.chase = chase;
      const row = p.riskRows[r];
      if (row === undefined || !this.rowStands(p, r, row, drawableR)) {
        looked = true;
        if (!(this.proveWaits && this.waitStands(p, r, row, drawableR, view, ctx))) {
          view.available = p.t.pools[r]!.body.available && drawableR;
          if (!synced) {
            this.world.sync(p);
            synced = true;
          }
          p.riskRows[r] = p.scorers[p.riskScorer[r]!]!.rowFor(view, ctx);
          p.riskDrawable[r] = drawableR ? 1 : 0;
          rebuilt = true;
          this.rowsBuilt++;
        }
      }
    }
    // The pack's rows are its levels' last rows (those kept, those made afresh), in level order.
    if (rebuilt) {
      const rows: ScoreRow[] = [];
      for (const row of p.riskRows) if (row) rows.push(row);
      p.rows = rows;
    }
    return rebuilt ? ROWS_CHANGED : looked ? LOOKED : NOTHING_SEEN;
  }

  /**
   * Whether risk level r's last row `old` stands by the change detector's rule: no forced rescore,
   * the same drawability, and nothing drawable then, or a risk level the strategy excludes (its
   * row waits whatever its numbers), or a wait whose realized mean (running sums) is still below
   * min_ev_ratio × price. This rule alone says when the detector's baseline moves (see `rows`), so
   * it stays as it is whatever else spares a row.
   */
  private rowStands(p: PackState, r: number, old: ScoreRow | null, drawableR: boolean): boolean {
    return (
      !p.mustRescore &&
      drawableR === (p.riskDrawable[r] === 1) &&
      (old === null ||
        p.excluded[r] === 1 ||
        (old.decision.action !== 'open' && this.stillBelow(p, r, p.views[r]!)))
    );
  }

  /**
   * Whether a row due by `rowStands` keeps its last row all the same: a wait (same drawability, no
   * forced rescore) whose next decision is proven to be a wait too (`provenWait`: the mean below
   * min_ev_ratio × price, or a Kelly size below one pack at an upper bound of the Kelly quantity).
   * Nothing reads a wait row but its action (decideOpen picks among open rows; a wait's reason
   * reaches no result), so no decision differs.
   */
  private waitStands(
    p: PackState,
    r: number,
    old: ScoreRow | null | undefined,
    drawableR: boolean,
    view: PackPool,
    ctx: ScoreContext,
  ): boolean {
    if (old === undefined || old === null || old.decision.action === 'open') return false;
    if (p.mustRescore || drawableR !== (p.riskDrawable[r] === 1)) return false;
    return p.scorers[p.riskScorer[r]!]!.provenWait(view, p.countView, p.esumView, ctx.balanceCents);
  }

  /**
   * Whether risk level r of pack p cannot be open-worthy now, so its last row (a wait) stands: the
   * realized mean the decision would read is below min_ev_ratio × price, and `decide` (score.ts)
   * then waits whatever else changed. The mean comes from running sums (equal to the row's within
   * ~1e-12); a 1e-6 margin keeps a pool that close to the threshold rescored. Keeping such a row
   * changes no decision, only how stale its wait reason and numbers are.
   */
  private stillBelow(p: PackState, r: number, view: PackPool): boolean {
    const price = view.price * 100;
    if (!(price > 0)) return false;
    const chase = view.chase;
    let mean: number;
    if (chase && chase.probability > 0)
      mean = p.scorers[p.riskScorer[r]!]!.realizedMeanOf(view, p.countView, p.esumView);
    else {
      // The same mean from the pack's live shares (the view's odds are the pack's at this level).
      this.world.freshOdds(p);
      mean = liveRealizedMean(p.cumTotal[r]!, p.liveShare, r * p.nb, p.nb, p.countView, p.esumView);
    }
    return mean < this.model.strategy.open.min_ev_ratio * price * (1 - STILL_BELOW_MARGIN);
  }

  /**
   * The pricing model's EV (`pullEv`), summed over the pack's risk levels: a change detector. From
   * the pack's live shares (`pullEvOfLevels`, the same sum).
   */
  private quickEv(p: PackState, now: number): number {
    this.world.freshOdds(p);
    const chase = this.world.chaseActive(p, now);
    const pc = chase ? p.chaseP : 0;
    const chaseCents = chase ? p.chaseCents : 0;
    return pullEvOfLevels(
      pc,
      chaseCents,
      p.liveShare,
      p.cumTotal,
      p.odds.length,
      this.count,
      this.sum,
      p.b0,
      p.nb,
      this.means,
    );
  }

  /** Whether rows were made on this path (else `rowsAsLast` makes them). */
  get hasRows(): boolean {
    return this.rowsCache !== null;
  }

  /**
   * The rows as last made, for a decision that reads none of their numbers (no pack can be opened
   * now whatever they say, `rowNumbersUnread`): no pack is rescored and the interval moves as
   * `rows` would move it (so the decision times stay the bot's). The next `rows` looks at every
   * pack that moved meanwhile, as always.
   */
  rowsAsLast(balanceCents: number, now: number): readonly ScoreRow[] {
    if (this.rowsCache === null) return this.rows(balanceCents, now);
    if (this.retired) throw new Error('dynamic market: rows asked for after rowsUnread');
    this.moveInterval(now);
    return this.rowsCache;
  }

  /**
   * No row will be read again (the bot can open nothing more): only the rescore interval moves,
   * as `rows` would move it, so `nextRefreshAt` and with it the path's decision times stay the same.
   */
  unread(now: number): void {
    this.retired = true;
    this.moveInterval(now);
  }

  nextRefreshAt(now: number): number {
    return Math.max(now + 1, this.rowsAt + this.rescoreMs);
  }
}
