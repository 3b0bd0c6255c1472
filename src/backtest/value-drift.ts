/**
 * The world's value drift on one path: each category's value index (1 at the start) moves by a
 * log-normal step every tick (`valueStep`, `indexFactor`: the world's trend and volatility). The
 * steps are drawn ahead from their own random stream, so drawing further never shifts another
 * draw: a listing looks ahead to the tick where its value leaves its decision's range
 * (listing-resolution.ts), and the shop prices its cards by the same indexes (shop.ts).
 */
import { CATEGORIES } from '../api/schemas.js';
import { DAY_MS } from '../core/clock.js';
import { Rng } from '../core/prng.js';
import type { Dynamics } from '../market/world-schema.js';
import { indexFactor, valueStep } from '../strategy/market-laws.js';

/** The API's categories, in the order their value indexes draw their moves each tick. */
export const CATEGORY_SLOT = new Map<string, number>(CATEGORIES.map((c, i) => [c, i]));

/** Slot of a category the world does not move (its value index stays 1). */
export const NO_CATEGORY = -1;
/** `indexTicks` before any tick of the value drift is drawn. */
const NO_TICK_DRAWN = -1;
/** Salt of the drift's random stream, apart from the path's own and the world's. */
const DRIFT_STREAM_SALT = 0x2545f491;

export class ValueDrift {
  /** Category value indexes after the last tick (they start at 1), by position in CATEGORY_SLOT. */
  readonly index = new Float64Array(CATEGORY_SLOT.size).fill(1);
  /**
   * The indexes after each tick (tick k at `indexPath[k · categories + c]`, tick 0 the start),
   * drawn ahead from their own stream: a listing looks ahead to the tick where its value leaves
   * the range its decision holds over, or where it sells, instead of being stepped every tick.
   */
  private indexPath = new Float64Array(0);
  /** The last tick drawn into `indexPath` (NO_TICK_DRAWN: none). */
  private indexTicks = NO_TICK_DRAWN;
  /** The value drift's draws (their own stream: drawing ahead shifts no other draw). */
  private readonly driftRng: Rng;

  constructor(
    /** The world's rates (trend and volatility of the values). */
    private readonly dyn: Dynamics,
    /** The world's tick (ms). */
    private readonly tickMs: number,
    seed: number,
    pathIndex: number,
  ) {
    this.driftRng = new Rng((seed ^ DRIFT_STREAM_SALT) >>> 0).fork(pathIndex);
  }

  /** The indexes after tick k become the current ones (`index`). */
  moveTo(k: number): void {
    const index = this.index;
    for (let c = 0; c < index.length; c++) index[c] = this.indexAt(k, c);
  }

  /** Category c's value index after tick k (drawn ahead as far as asked, a day at a time). */
  indexAt(k: number, c: number): number {
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
}

/** A category's slot in CATEGORY_SLOT (NO_CATEGORY: one the world does not move). */
export function slotOf(category: string): number {
  return CATEGORY_SLOT.get(category) ?? NO_CATEGORY;
}
