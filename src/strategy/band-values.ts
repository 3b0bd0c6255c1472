/**
 * A band's table of distinct card values for the incremental scorer (incremental-score.ts): each
 * value's terms under the strategy's pull policy, at the scorer's price, by value id.
 */
import {
  type OutcomeEvaluator,
  T,
  T_EX2,
  T_EXPECTED,
  T_F2,
  T_LOSS,
  T_SOLD,
  T_VALUE,
  T_X,
  T_X2,
} from './outcome-terms.js';

/** Starting room of a band's values table (doubles when full). */
const FIRST_VALUES_ROOM = 16;

// A value's terms as a band's re-sum reads them (`BandValues.summed`), R per value.
export const R_VALUE = 0;
export const R_EXPECTED = 1;
export const R_EX2 = 2;
export const R_LOSS = 3;
export const R_SOLD = 4;
export const R = 5;

/**
 * A band's distinct card values with their terms (stride T, loss at the scorer's price): cards are
 * kept as ids into it, so a card change moves one integer, not a record. Append-only, so ids stay
 * valid and clones share it.
 */
export class BandValues {
  /** Each id's terms (stride T). */
  terms = new Float64Array(FIRST_VALUES_ROOM * T);
  /** Expected realized value by id, apart: what every card added reads (cache-dense). */
  expected = new Float64Array(FIRST_VALUES_ROOM);
  /**
   * The terms a band's re-sum reads (`refresh`), by id (stride R): 40 bytes where `terms` gives
   * each id 64, so the re-sum, which reads ids at random, touches fewer cache lines (a worker's
   * tables are about the size of a core's L2 cache).
   */
  summed = new Float64Array(FIRST_VALUES_ROOM * R);
  /** Ids handed out so far (the next id). */
  size = 0;
  /** Id by value (cents); made at the first look-up after `number` (an owner that numbers never looks up). */
  private ids: Map<number, number> | null = new Map();

  constructor(
    private readonly evaluator: OutcomeEvaluator,
    private readonly sealed: boolean,
    private readonly priceCents: number,
  ) {}

  id(valueCents: number): number {
    const ids = this.index();
    const known = ids.get(valueCents);
    if (known !== undefined) return known;
    const i = this.size++;
    if (i >= this.expected.length) this.room(this.expected.length * 2);
    this.write(i, valueCents);
    ids.set(valueCents, i);
    return i;
  }

  /**
   * Ids 0 … n − 1 for the n distinct `values`, in order, on a table with none yet: what n calls of
   * `id` give, in arrays made once at their size.
   */
  number(values: Float64Array): void {
    if (this.size !== 0) throw new Error('band values already numbered');
    if (values.length > this.expected.length) this.room(values.length);
    for (let i = 0; i < values.length; i++) this.write(i, values[i]!);
    this.size = values.length;
    this.ids = null;
  }

  private index(): Map<number, number> {
    if (this.ids) return this.ids;
    const ids = new Map<number, number>();
    for (let i = 0; i < this.size; i++) ids.set(this.terms[i * T + T_VALUE]!, i);
    this.ids = ids;
    return ids;
  }

  /** Room for `n` ids, the ids so far kept. */
  private room(n: number): void {
    const grow = (a: Float64Array, stride: number) => {
      const g = new Float64Array(n * stride);
      g.set(a);
      return g;
    };
    this.terms = grow(this.terms, T);
    this.expected = grow(this.expected, 1);
    this.summed = grow(this.summed, R);
  }

  private write(i: number, valueCents: number): void {
    const terms = this.terms;
    const at = i * T;
    this.evaluator.write(valueCents, this.sealed, terms, at);
    terms[at + T_LOSS] = lossOf(terms, at, this.priceCents);
    this.expected[i] = terms[at + T_EXPECTED]!;
    const summed = this.summed;
    summed[i * R + R_VALUE] = terms[at + T_VALUE]!;
    summed[i * R + R_EXPECTED] = terms[at + T_EXPECTED]!;
    summed[i * R + R_EX2] = terms[at + T_EX2]!;
    summed[i * R + R_LOSS] = terms[at + T_LOSS]!;
    summed[i * R + R_SOLD] = terms[at + T_SOLD]!;
  }
}

/** Probability that a pull with these terms realizes less than the price. */
export function lossOf(terms: Float64Array, at: number, priceCents: number): number {
  const f2 = terms[at + T_F2]!;
  return (terms[at + T_X]! < priceCents ? 1 - f2 : 0) + (f2 > 0 && terms[at + T_X2]! < priceCents ? f2 : 0);
}
