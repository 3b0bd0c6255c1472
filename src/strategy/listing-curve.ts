/**
 * What the model expects of a listing that is still running. A listing's outcome is known only
 * when it ends (sold, or delisted and sold back), up to a week after the pull; comparing only the
 * listings that ended would favour the quick ones, which are the ones that sold. Instead a
 * listing alive at age a counts at what the listing's life (listing-life.ts) expects of it given
 * that it has not ended by then:
 *
 *   mark(a) = E[outcome | still listed at a] = (E[outcome] − E[outcome; ended by a]) / P(alive at a)
 *
 * The mark starts at the whole-life expectation and moves to the outcome: under the model it is a
 * martingale, so the sum of (mark − expectation) over listings has mean zero at every instant and
 * the variance `E[mark²] − E[outcome]²`, which grows to the outcome's own variance as listings end.
 * A world whose buyers are slower than the strategy assumes shows at once: its listings outlive
 * the model's, and each one's mark falls with every hour it stays unsold.
 *
 * Every figure is a multiple of the card's value at listing (a pull: its value at pull).
 */
import { computeLife, type LifeSoFar } from './listing-life.js';
import { SellListCache } from './sell-list-cache.js';
import type { Strategy } from './strategy-schema.js';

export interface ListingMark {
  /** P(still listed at this age) under the model. */
  alive: number;
  /** E[outcome | still listed], × value. */
  mark: number;
  /** Var(mark at this age − whole-life mean), × value². */
  variance: number;
}

export interface ListingCurve {
  /** E[outcome] over the whole life and its variance (× value, × value²). */
  readonly mean: number;
  readonly variance: number;
  /** Age from which the model's view of a listing no longer changes (every deadline is past). */
  readonly horizonMs: number;
  /** The model's view of a listing still running `ageMs` after it was listed. */
  markAt(ageMs: number): ListingMark;
}

/** Below this probability of being alive, a listing is past every deadline of the model. */
const GONE = 1e-9;

const curves = new SellListCache<ListingCurve>(buildCurve);

/** The curve of a pull's listing (sell-back locked to the value at pull), once per listing setting. */
export function listingCurve(strategy: Strategy): ListingCurve {
  return curves.get(strategy);
}

function buildCurve(strategy: Strategy): ListingCurve {
  const points: LifeSoFar[] = [];
  computeLife(strategy, 1, (so) => points.push(so));
  const end = points[points.length - 1]!;
  const mean = end.sale1 + end.fallback1;
  const m2 = end.sale2 + end.fallback2;
  const variance = Math.max(0, m2 - mean * mean);
  // Past the model's horizon (the bot was down, say), a listing is worth what a fallback pays.
  const fallbackYield = end.ended > 0 ? end.fallback1 / end.ended : 0;
  const at = Float64Array.from(points, (p) => p.at);
  const markOf = (p: LifeSoFar): ListingMark => {
    const alive = Math.max(0, 1 - p.sold - p.ended);
    if (alive < GONE) return { alive: 0, mark: fallbackYield, variance };
    const mark = Math.max(0, mean - p.sale1 - p.fallback1) / alive;
    const second = p.sale2 + p.fallback2 + alive * mark * mark;
    return { alive, mark, variance: Math.max(0, second - mean * mean) };
  };
  const marks = points.map(markOf);
  return {
    mean,
    variance,
    horizonMs: end.at,
    markAt(ageMs: number): ListingMark {
      if (!(ageMs >= 0)) return marks[0]!;
      // The last event at or before the age: the model's state holds until the next one.
      let lo = 0;
      let hi = at.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (at[mid]! <= ageMs) lo = mid;
        else hi = mid - 1;
      }
      return marks[lo]!;
    },
  };
}
