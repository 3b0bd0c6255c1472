/**
 * The world's value drift on one path: each category's value index (1 at the start) moves by a
 * log-normal step every tick (`valueStep`, `indexFactor`: the world's trend and volatility). The
 * steps are drawn ahead from their own random stream, so drawing further never shifts another
 * draw: a listing looks ahead to the tick where its value leaves its decision's range
 * (listing-resolution.ts), and the shop prices its cards by the same indexes (shop.ts).
 */
import { CATEGORIES } from '../../api/schemas.js';
import { DAY_MS } from '../../core/clock.js';
import { Rng } from '../../core/prng.js';
import type { Dynamics } from '../../market/world-schema.js';
import { indexFactor, type ValueStep, valueStep } from '../../strategy/market-laws.js';

/** The API's categories, in the order their value indexes draw their moves each tick. */
export const CATEGORY_SLOT = new Map<string, number>(CATEGORIES.map((c, i) => [c, i]));

/** Slot of a category the world does not move (its value index stays 1). */
export const NO_CATEGORY = -1;
/** `drawn` of a category none of whose ticks is drawn yet. */
const NO_TICK_DRAWN = -1;
/** Salt of the drift's random stream, apart from the path's own and the world's. */
const DRIFT_STREAM_SALT = 0x2545f491;
const EMPTY = new Float64Array(0);

export class ValueDrift {
  /**
   * Per category: its index after each tick (tick k at `paths[c][k]`, tick 0 the start), drawn
   * ahead from the category's own stream: a listing looks ahead to the tick where its value leaves
   * the range its decision holds over, or where it sells, instead of being stepped every tick.
   */
  private readonly paths: Float64Array[] = [];
  /** Per category: the last tick drawn into its path (NO_TICK_DRAWN: none). */
  private readonly drawn = new Int32Array(CATEGORY_SLOT.size).fill(NO_TICK_DRAWN);
  /**
   * Per category: its own stream. A category is drawn only once something reads it (a pool, a
   * listing or the shop of its category): the others never move anything observed, so they are
   * not drawn, and drawing one never shifts another's draws.
   */
  private readonly rngs: Rng[] = [];
  /**
   * The last tick `moveTo` reached. Only recorded: a category's path is drawn when something reads
   * it (`indexNow`, `indexAt`), not at every tick — most ticks of a path are never read (a
   * strategy that stops trading reads none after its last listing ends), and a tick's value does
   * not depend on when it is drawn.
   */
  private tick = 0;
  /** The log-normal step of one tick (`valueStep`). */
  private readonly step: ValueStep;

  constructor(
    /** The world's rates (trend and volatility of the values). */
    dyn: Dynamics,
    /** The world's tick (ms). */
    private readonly tickMs: number,
    seed: number,
    pathIndex: number,
    /** The categories read from the start (slots): the model's pools' and, with the shop, its cards'. */
    read: Iterable<number> = [],
  ) {
    const base = new Rng((seed ^ DRIFT_STREAM_SALT) >>> 0).fork(pathIndex);
    for (let c = 0; c < CATEGORY_SLOT.size; c++) {
      this.rngs.push(base.fork(c));
      this.paths.push(EMPTY);
    }
    this.step = valueStep(dyn.value_daily_trend, dyn.value_daily_volatility, tickMs / DAY_MS);
    for (const c of read) this.follow(c);
  }

  /** Category c is read from now on: `indexNow` follows it. */
  private follow(c: number): void {
    if (c < 0 || this.drawn[c] !== NO_TICK_DRAWN) return;
    this.drawIndexes(this.tick, c);
  }

  /** The indexes after tick k become the current ones (`indexNow`). */
  moveTo(k: number): void {
    this.tick = k;
  }

  /**
   * Category c's value index after the last tick `moveTo` reached: 1 until the category is first
   * read (`indexAt`, or read from the start), its path from then on.
   */
  indexNow(c: number): number {
    return this.drawn[c] === NO_TICK_DRAWN ? 1 : this.indexAt(this.tick, c);
  }

  /** Category c's value index after tick k (drawn ahead as far as asked, a day at a time). */
  indexAt(k: number, c: number): number {
    if (this.drawn[c] === NO_TICK_DRAWN) this.follow(c);
    if (k > this.drawn[c]!) this.drawIndexes(k, c);
    return this.paths[c]![k]!;
  }

  /**
   * Category c's indexes by tick as drawn so far (`indexAt` draws more; then they may be in a new
   * array): valid up to tick `drawnTo(c)`, for a reader that walks them tick by tick.
   */
  indexesOf(c: number): Float64Array {
    return this.paths[c]!;
  }

  /** The last tick of category c's indexes drawn so far (`indexesOf`). */
  drawnTo(c: number): number {
    return this.drawn[c]!;
  }

  /** Category c's value drift up to tick `k` at least: log-normal steps with the world's trend and volatility. */
  private drawIndexes(k: number, c: number): void {
    const drawn = this.drawn[c]!;
    const perDay = Math.max(1, Math.round(DAY_MS / this.tickMs));
    // Whole Box–Muller pairs (an even count of new ticks): a tick's value never depends on how
    // far ahead the path was drawn.
    let upTo = Math.max(k, drawn + perDay);
    if ((upTo - Math.max(0, drawn)) % 2 === 1) upTo++;
    let path = this.paths[c]!;
    if (upTo + 1 > path.length) {
      // Room doubles (a long backtest copies the path a few times, not once a day).
      path = new Float64Array(Math.max(upTo + 1, 2 * path.length));
      if (drawn >= 0) path.set(this.paths[c]!.subarray(0, drawn + 1));
      this.paths[c] = path;
    }
    if (drawn === NO_TICK_DRAWN) path[0] = 1;
    // The normals first, in the array's new part, then turned into the indexes in place.
    const from = Math.max(1, drawn + 1);
    this.rngs[c]!.normals(path, from, upTo + 1);
    const step = this.step;
    for (let i = from; i <= upTo; i++) path[i] = path[i - 1]! * indexFactor(step, path[i]!);
    this.drawn[c] = upTo;
  }
}

/** A category's slot in CATEGORY_SLOT (NO_CATEGORY: one the world does not move). */
export function slotOf(category: string): number {
  return CATEGORY_SLOT.get(category) ?? NO_CATEGORY;
}
