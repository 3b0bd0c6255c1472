/**
 * The values a card generated into a band (restock, unseen cards of a truncated band) can take in
 * the dynamic backtest: every cent of the band's range when it spans at most GRID_POINTS cents,
 * else GRID_POINTS evenly spaced whole-cent values from its minimum to its maximum. Each value's
 * realised-outcome terms are evaluated once per worker and copied into the scorers, instead of
 * running the strategy's pull policy for every generated card (two `exp` and four roundings,
 * about a sixth of a dynamic path's time). The simulator draws any cent of the range: the grid's
 * mean is the same (symmetric), its variance differs by O(1/GRID_POINTS²) of the band's.
 */
import { type OutcomeEvaluator, TERMS_STRIDE } from '../strategy/incremental-score.js';

export const GRID_POINTS = 256;

export class ValueGrid {
  readonly size: number;
  /** Value (cents) of each grid point. */
  readonly values: Float64Array;
  /** Each point's term record (TERMS_STRIDE numbers), valid once `ready`. */
  readonly terms: Float64Array;
  private readonly ready: Uint8Array;

  constructor(
    minCents: number,
    maxCents: number,
    private readonly sealed: boolean,
    private readonly evaluator: OutcomeEvaluator,
  ) {
    const span = Math.max(0, maxCents - minCents);
    this.size = span + 1 <= GRID_POINTS ? span + 1 : GRID_POINTS;
    this.values = new Float64Array(this.size);
    for (let k = 0; k < this.size; k++)
      this.values[k] =
        this.size === span + 1 ? minCents + k : minCents + Math.round((k * span) / (this.size - 1));
    this.terms = new Float64Array(this.size * TERMS_STRIDE);
    this.ready = new Uint8Array(this.size);
  }

  /** Offset of point k's terms in `terms`, evaluating them the first time. */
  termsAt(k: number): number {
    const at = k * TERMS_STRIDE;
    if (this.ready[k] === 0) {
      this.evaluator.write(this.values[k]!, this.sealed, this.terms, at);
      this.ready[k] = 1;
    }
    return at;
  }
}
