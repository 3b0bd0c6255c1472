/**
 * The per-value terms the incremental scorer sums (a T-stride record per distinct value), and
 * the evaluator that computes them with the strategy's pull policy: the same numbers
 * `realizedStats` computes per atom.
 */
import { FRESH_RATE } from './listing-model.js';
import { compilePolicy, newScratch, sealedValueCents } from './pull-policy.js';
import type { Strategy } from './strategy-schema.js';

/**
 * A value's terms (stride T), kept once per distinct value in its band's table (`BandValues`);
 * cards are ids into that table, so sums and growth read a band's small table, never a table
 * indexed by value in cents (restocked values spread over millions of cents: a miss per card).
 */
export const T_VALUE = 0;
/** Expected realized value (cents). */
export const T_EXPECTED = 1;
/** E[outcome²] of one pull: (1 − f2)·x² + f2·x2² (price-independent). */
export const T_EX2 = 2;
/** Probability the pull realizes less than the price (depends on the scorer's price). */
export const T_LOSS = 3;
/** 1 when sold back at once. */
export const T_SOLD = 4;
/** First outcome (sale, sell-back payout or sealed worth) and, when listed, the fallback. */
export const T_X = 5;
export const T_X2 = 6;
/** Share of the atom's probability on the fallback (1 − fill when listed, else 0). */
export const T_F2 = 7;
export const T = 8;

/** Entries of the evaluator's direct-mapped cache (a power of two). */
const CACHE = 2048;
/** The key of an empty cache entry: NaN equals no key, so an empty entry never hits. */
const EMPTY_KEY = Number.NaN;

/**
 * Realized outcome of one pull by value (cents) and kind (card or sealed pack), evaluated with the
 * strategy's pull policy: the same numbers `realizedStats` computes per atom. A small
 * direct-mapped cache keeps the recorded cards' repeated values from being evaluated again.
 */
export class OutcomeEvaluator {
  /** Whether every outcome evaluated so far is ≥ 0 (what `growthSign`'s lower bound assumes). */
  nonNegative = true;
  /** Per cache entry, the key (see `write`) whose terms it holds. */
  private readonly keys = new Float64Array(CACHE).fill(EMPTY_KEY);
  /** Per cache entry, the terms T_EXPECTED..T_F2 at the same offsets (stride T). */
  private readonly data = new Float64Array(CACHE * T);
  /** The strategy's pull policy, compiled once. */
  private readonly policy;
  /** The policy's working memory, reused by every evaluation (no allocation per value). */
  private readonly scratch = newScratch();

  constructor(private readonly strategy: Strategy) {
    this.policy = compilePolicy(strategy);
  }

  /** Writes the price-independent terms of `valueCents` into `dest` at `at` (a T-stride record). */
  write(valueCents: number, sealed: boolean, dest: Float64Array, at: number): void {
    // A sealed pack's key is negative (−1 − value), so it never meets a card of the same value.
    const key = sealed ? -1 - valueCents : valueCents;
    // The high bits folded in: values that differ by a multiple of CACHE spread over entries.
    const h = ((key | 0) ^ ((key | 0) >>> 11)) & (CACHE - 1);
    const data = this.data;
    const c = h * T;
    if (this.keys[h] !== key) {
      this.evaluate(valueCents, sealed, data, c);
      this.keys[h] = key;
    }
    dest[at + T_VALUE] = valueCents;
    dest[at + T_EXPECTED] = data[c + T_EXPECTED]!;
    dest[at + T_EX2] = data[c + T_EX2]!;
    dest[at + T_SOLD] = data[c + T_SOLD]!;
    dest[at + T_X] = data[c + T_X]!;
    dest[at + T_X2] = data[c + T_X2]!;
    dest[at + T_F2] = data[c + T_F2]!;
  }

  private evaluate(valueCents: number, sealed: boolean, d: Float64Array, c: number): void {
    let x: number;
    let x2 = 0;
    let f2 = 0;
    let sold = 0;
    if (sealed) {
      x = sealedValueCents(valueCents, this.strategy);
      d[c + T_EXPECTED] = x;
    } else {
      const plan = this.policy.evaluate(valueCents, FRESH_RATE, this.scratch);
      d[c + T_EXPECTED] = plan.expectedCents;
      if (plan.list) {
        x = plan.saleCents;
        x2 = plan.fallbackCents;
        f2 = 1 - plan.fill;
      } else {
        x = plan.payoutCents;
        sold = 1;
      }
    }
    d[c + T_X] = x;
    d[c + T_X2] = x2;
    d[c + T_F2] = f2;
    d[c + T_SOLD] = sold;
    d[c + T_EX2] = (1 - f2) * x * x + f2 * x2 * x2;
    if (!(x >= 0) || !(x2 >= 0)) this.nonNegative = false;
  }
}

const evaluators = new WeakMap<Strategy, OutcomeEvaluator>();
/** The outcome evaluator shared by every scorer of a strategy (per thread). */
export function outcomeEvaluator(strategy: Strategy): OutcomeEvaluator {
  let t = evaluators.get(strategy);
  if (!t) {
    t = new OutcomeEvaluator(strategy);
    evaluators.set(strategy, t);
  }
  return t;
}
