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
import { fastCents as toCents } from './cents.js';

const KIND_CARD = 0;
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

export function pullDistribution(pool: PackPool): PullDistribution {
  const chaseP = pool.chase ? pool.chase.probability : 0;
  const bands = pool.bands;
  let oddsSum = 0;
  for (const b of bands) if (b.odds > 0) oddsSum += b.odds;
  if (chaseP < 1 && !(oddsSum > 0)) {
    throw new EmptyPoolError(
      pool,
      bands.length === 0 ? 'it has no bands' : 'no band has odds > 0 (nothing left to pull)',
    );
  }

  // Group card indices by band without per-card allocation: a count pass, then a fill pass.
  const bandIndex = new Map<string, number>();
  for (let i = 0; i < bands.length; i++)
    if (!bandIndex.has(bands[i]!.bucket_id)) bandIndex.set(bands[i]!.bucket_id, i);
  const nCards = pool.cards.length;
  const cardBand = new Int32Array(nCards);
  const listed = new Int32Array(bands.length);
  for (let i = 0; i < nCards; i++) {
    const b = bandIndex.get(pool.cards[i]!.bucket_id) ?? -1;
    cardBand[i] = b;
    if (b >= 0) listed[b]!++;
  }
  const start = new Int32Array(bands.length + 1);
  for (let b = 0; b < bands.length; b++) start[b + 1] = start[b]! + listed[b]!;
  const order = new Int32Array(start[bands.length]!);
  const cursor = start.slice(0, bands.length);
  for (let i = 0; i < nCards; i++) {
    const b = cardBand[i]!;
    if (b >= 0) order[cursor[b]!++] = i;
  }

  // Atom count: the chase, every listed card of a live band, one midpoint/unseen atom where needed.
  const rest = chaseP < 1 ? 1 - chaseP : 0;
  let n = pool.chase && chaseP > 0 ? 1 : 0;
  for (let b = 0; b < bands.length; b++) {
    const band = bands[b]!;
    if (!(band.odds > 0) || rest <= 0) continue;
    const k = listed[b]!;
    n += band.is_consolation ? Math.max(k, 1) : k + (Math.max(band.hittable_cards, k, 1) > k ? 1 : 0);
  }

  const d = allocate(n);
  const notes: string[] = [];
  let at = 0;
  const put = (v: number, lo: number, hi: number, p: number, kind: AtomKind, band: number, card: number) => {
    d.value[at] = v;
    d.lo[at] = lo;
    d.hi[at] = hi;
    d.prob[at] = p;
    d.kind[at] = kind;
    d.band[at] = band;
    d.card[at] = card;
    at++;
  };
  if (pool.chase && chaseP > 0) {
    const v = toCents(pool.chase.card.market_value);
    put(v, v, v, chaseP, KIND_CHASE, -1, -1);
  }
  for (let b = 0; b < bands.length; b++) {
    const band = bands[b]!;
    if (!(band.odds > 0) || rest <= 0) continue;
    const q = (rest * band.odds) / oddsSum;
    const k = listed[b]!;
    const min = toCents(band.min_value);
    const max = toCents(band.max_value);
    const mid = (min + max) / 2;
    const kind = band.is_consolation ? KIND_SEALED : KIND_CARD;
    if (band.is_consolation && k === 0) {
      put(mid, mid, mid, q, KIND_SEALED, b, -1);
      continue;
    }
    const slots = band.is_consolation ? k : Math.max(band.hittable_cards, k, 1);
    const each = q / slots;
    for (let j = start[b]!; j < start[b + 1]!; j++) {
      const ci = order[j]!;
      const v = toCents(pool.cards[ci]!.market_value);
      put(v, v, v, each, kind, b, ci);
    }
    const unseen = slots - k;
    if (unseen > 0) {
      notes.push(
        `band ${band.bucket_id}: ${k} of ${slots} cards listed; ` +
          `${unseen} unseen valued ${band.min_value}..${band.max_value} USD (midpoint used)`,
      );
      put(mid, min, max, each * unseen, KIND_CARD, b, -1);
    }
  }
  return finish(d, notes);
}

type Arrays = Pick<
  PullDistribution,
  'value' | 'lo' | 'hi' | 'prob' | 'cdf' | 'kind' | 'band' | 'card' | 'size'
>;

function allocate(n: number): Arrays {
  return {
    size: n,
    value: new Float64Array(n),
    lo: new Float64Array(n),
    hi: new Float64Array(n),
    prob: new Float64Array(n),
    cdf: new Float64Array(n),
    kind: new Uint8Array(n),
    band: new Int32Array(n),
    card: new Int32Array(n),
  };
}

function finish(d: Arrays, notes: string[]): PullDistribution {
  const { size: n, value, lo, hi, prob, cdf } = d;
  let ev = 0;
  let evLo = 0;
  let evHi = 0;
  let ex2 = 0;
  let acc = 0;
  for (let i = 0; i < n; i++) {
    const p = prob[i]!;
    const v = value[i]!;
    acc += p;
    cdf[i] = acc;
    ev += p * v;
    evLo += p * lo[i]!;
    evHi += p * hi[i]!;
    ex2 += p * v * v;
  }
  if (n > 0) cdf[n - 1] = 1;
  return {
    ...d,
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
