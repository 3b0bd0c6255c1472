/**
 * The exact distribution of one pull's value from a pool body (DESIGN.md, pricing model), as
 * parallel typed arrays of atoms so that scoring is one linear pass and the backtest can sample a
 * pull with one uniform number and a binary search, without allocating.
 *
 * Model (and its assumptions, made explicit):
 * - The chase is hit first with `chase.probability`; otherwise a band is drawn with its odds
 *   renormalised over the bands with odds > 0 (so bands summing to 1 or to 1 − p give the same
 *   result), then a card uniformly among the band's cards listed in `cards`.
 * - A consolation band yields a sealed pack: one atom per listed item, else one atom at the
 *   midpoint of `min_value`/`max_value`.
 * - Truncated band (fewer listed cards than `hittable_cards`, or odds > 0 and nothing listed): each
 *   listed card keeps probability 1/hittable of the band; the unseen remainder is ONE atom valued
 *   at the band's midpoint, bounded by `min_value` (lo) and `max_value` (hi). The distribution is
 *   then `estimated` and `evLoCents`/`evHiCents` bracket the truth.
 * - Cards whose `bucket_id` names no band, or a band with odds 0, are ignored.
 */
import type { PackPool } from '../api/schemas.js';
import { toCents } from '../core/money.js';

export const KIND_CARD = 0;
export const KIND_SEALED = 1;
export const KIND_CHASE = 2;
export type AtomKind = typeof KIND_CARD | typeof KIND_SEALED | typeof KIND_CHASE;

export interface PullDistribution {
  readonly size: number;
  /** Value in cents (integer for a listed card; a midpoint may be a half cent). */
  readonly value: Float64Array;
  /** Bounds of the value: equal to `value` except for unseen-card atoms of truncated bands. */
  readonly lo: Float64Array;
  readonly hi: Float64Array;
  readonly prob: Float64Array;
  /** Cumulative probability, last entry exactly 1: `sampleAtom` searches it. */
  readonly cdf: Float64Array;
  readonly kind: Uint8Array;
  /** Index into `pool.bands`, −1 for the chase. */
  readonly band: Int32Array;
  /** Index into `pool.cards`, −1 for the chase, a midpoint or unseen cards. */
  readonly card: Int32Array;
  readonly estimated: boolean;
  /** Expected value in cents (unrounded), and its bounds when estimated. */
  readonly evCents: number;
  readonly evLoCents: number;
  readonly evHiCents: number;
  /** Variance of the value, cents². */
  readonly varianceCents2: number;
  /** Why the distribution is estimated, for people. */
  readonly notes: readonly string[];
}

/** The pool cannot produce a pull (no chase and no band with odds > 0): a clear error, not NaN. */
export class EmptyPoolError extends Error {
  constructor(pool: Pick<PackPool, 'category' | 'pack_type' | 'risk_level'>, why: string) {
    super(`pool ${pool.category}/${pool.pack_type}/${pool.risk_level} cannot be scored: ${why}`);
    this.name = 'EmptyPoolError';
  }
}

interface Atom {
  value: number;
  lo: number;
  hi: number;
  prob: number;
  kind: AtomKind;
  band: number;
  card: number;
}

export function pullDistribution(pool: PackPool): PullDistribution {
  const chaseP = pool.chase ? pool.chase.probability : 0;
  let oddsSum = 0;
  for (const b of pool.bands) if (b.odds > 0) oddsSum += b.odds;
  if (chaseP < 1 && !(oddsSum > 0)) {
    throw new EmptyPoolError(
      pool,
      pool.bands.length === 0 ? 'it has no bands' : 'no band has odds > 0 (nothing left to pull)',
    );
  }

  const bandIndex = new Map<string, number>();
  pool.bands.forEach((b, i) => {
    if (!bandIndex.has(b.bucket_id)) bandIndex.set(b.bucket_id, i);
  });
  const cardsByBand: number[][] = pool.bands.map(() => []);
  pool.cards.forEach((c, i) => {
    const b = bandIndex.get(c.bucket_id);
    if (b !== undefined) cardsByBand[b]!.push(i);
  });

  const atoms: Atom[] = [];
  const notes: string[] = [];
  if (pool.chase && chaseP > 0) {
    const v = toCents(pool.chase.card.market_value);
    atoms.push({ value: v, lo: v, hi: v, prob: chaseP, kind: KIND_CHASE, band: -1, card: -1 });
  }
  const rest = 1 - chaseP;
  pool.bands.forEach((band, bi) => {
    if (!(band.odds > 0) || rest <= 0) return;
    const q = (rest * band.odds) / oddsSum;
    const listed = cardsByBand[bi]!;
    const min = toCents(band.min_value);
    const max = toCents(band.max_value);
    const mid = (min + max) / 2;
    if (band.is_consolation) {
      if (listed.length === 0) {
        atoms.push({ value: mid, lo: mid, hi: mid, prob: q, kind: KIND_SEALED, band: bi, card: -1 });
        return;
      }
      const each = q / listed.length;
      for (const ci of listed) {
        const v = toCents(pool.cards[ci]!.market_value);
        atoms.push({ value: v, lo: v, hi: v, prob: each, kind: KIND_SEALED, band: bi, card: ci });
      }
      return;
    }
    const slots = Math.max(band.hittable_cards, listed.length, 1);
    const each = q / slots;
    for (const ci of listed) {
      const v = toCents(pool.cards[ci]!.market_value);
      atoms.push({ value: v, lo: v, hi: v, prob: each, kind: KIND_CARD, band: bi, card: ci });
    }
    const unseen = slots - listed.length;
    if (unseen > 0) {
      notes.push(
        `band ${band.bucket_id}: ${listed.length} of ${slots} cards listed; ` +
          `${unseen} unseen valued ${band.min_value}..${band.max_value} USD (midpoint used)`,
      );
      atoms.push({ value: mid, lo: min, hi: max, prob: each * unseen, kind: KIND_CARD, band: bi, card: -1 });
    }
  });
  return pack(atoms, notes);
}

function pack(atoms: Atom[], notes: string[]): PullDistribution {
  const n = atoms.length;
  const value = new Float64Array(n);
  const lo = new Float64Array(n);
  const hi = new Float64Array(n);
  const prob = new Float64Array(n);
  const cdf = new Float64Array(n);
  const kind = new Uint8Array(n);
  const band = new Int32Array(n);
  const card = new Int32Array(n);
  let ev = 0;
  let evLo = 0;
  let evHi = 0;
  let ex2 = 0;
  let acc = 0;
  for (let i = 0; i < n; i++) {
    const a = atoms[i]!;
    value[i] = a.value;
    lo[i] = a.lo;
    hi[i] = a.hi;
    prob[i] = a.prob;
    kind[i] = a.kind;
    band[i] = a.band;
    card[i] = a.card;
    acc += a.prob;
    cdf[i] = acc;
    ev += a.prob * a.value;
    evLo += a.prob * a.lo;
    evHi += a.prob * a.hi;
    ex2 += a.prob * a.value * a.value;
  }
  if (n > 0) cdf[n - 1] = 1;
  return {
    size: n,
    value,
    lo,
    hi,
    prob,
    cdf,
    kind,
    band,
    card,
    estimated: notes.length > 0,
    evCents: ev,
    evLoCents: evLo,
    evHiCents: evHi,
    varianceCents2: Math.max(0, ex2 - ev * ev),
    notes,
  };
}

/** Index of the atom a uniform `u` in [0, 1) falls on (binary search over the cdf). */
export function sampleAtom(dist: PullDistribution, u: number): number {
  const cdf = dist.cdf;
  let lo = 0;
  let hi = dist.size - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (u < cdf[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
