/**
 * A pack's state on one backtest path, as the world (world-pools.ts) keeps it: the fields a card
 * change reads first, then the band store's slices, the odds, the scorers and the last rows; how
 * it starts a path (made, or reset for a worker's next path) and its running odds.
 */
import type { PackPool } from '../../api/schemas.js';
import { toCents } from '../../core/money.js';
import type { IncrementalScorer } from '../../strategy/incremental-score.js';
import { liveOdds, othersRiskShare, runningLiveOdds } from '../../strategy/market-laws.js';
import type { ScoreRow } from '../../strategy/score.js';
import type { PackTemplate } from './pack-templates.js';
import type { PackStart } from './world-layout.js';

/** A pool of no pack, a band that is none (no live band; a chase pull), a risk level that is none. */
export const NO_PACK = -1;
export const NO_BAND = -1;
export const NO_RISK_LEVEL = -1;
/** The id stored for a card of an ignored pack (which keeps counts, not cards) and for the chase. */
export const NO_CARD = -1;
/** `drawBand`'s answers besides a band (≥ 0): the chase was pulled, nothing can be drawn. */
export const DRAW_CHASE = -1;
export const DRAW_NOTHING = -2;

export interface PackState {
  // Read by every world card change: first, so they share the object's first cache lines.
  /** The chase's probability (0 without one). */
  chaseP: number;
  /** The chase card's value (cents; 0 without one). */
  chaseCents: number;
  /** Whether the chase was pulled (gone for everyone). */
  chaseHit: boolean;
  /** When the chase ends (ms; +∞ if never). */
  chaseEndsAt: number;
  /** Whether `cum`, `cumTotal` and the pack's `mixCum` must be rebuilt before a draw. */
  cumDirty: boolean;
  /** Other users' openings: total of `mixCum` (< 1 when a level is empty). */
  mixTotal: number;
  /**
   * The strategy excludes every risk level of the pack: its rows wait whatever it holds, so only
   * its band counts are kept (other users still open it while it has cards), not its cards.
   */
  ignored: boolean;
  /** Σ over bands of max(0, recorded size − cards): the restock gap, kept on every put/take. */
  gap: number;
  /** Cards in the pack, all bands. */
  cardCount: number;
  /** Cards taken or added since the pack was last scored. */
  changes: number;
  /** `changes` when the pack was last looked at (scored or found unmoved): equal, nothing to look at. */
  lookedChanges: number;
  /** Whether its chase was active when it was last looked at (a chase can end by time alone). */
  lookedChase: boolean;
  /** The pack's bands are the market's bands b0 … b0 + nb − 1 (see WorldPools's band arrays). */
  b0: number;
  nb: number;
  /** What the snapshot records of the pack. */
  t: PackTemplate;
  /** The pack's slices of the market's `count` and `esum` (for `realizedMeanOf`). */
  countView: Int32Array;
  esumView: Float64Array;
  /** Band odds per risk level (t.pools order), by band. */
  odds: Float64Array[];
  /** Per risk level: bands holding a card with odds > 0 (drawable without a scan). */
  live: Int32Array;
  /** Per risk level × band: running odds over bands holding cards; rebuilt when a band empties or refills. */
  cum: Float64Array;
  /** Per risk level: the total of its `cum`. */
  cumTotal: Float64Array;
  /**
   * Per risk level × band: the band's live odds ÷ the level's `cumTotal` (0 where it is empty or
   * has no odds), rebuilt with `cum` (`pullEvOfLevels`, the rescorer's realized means).
   */
  liveShare: Float64Array;
  /** Position of the 'standard' risk level in t.pools (NO_RISK_LEVEL: none). */
  standard: number;
  /** Incremental scorers (one per distinct price), given the bands that changed when a row is needed (`sync`). */
  scorers: IncrementalScorer[];
  /** Per risk level: its scorer (index in `scorers`). */
  riskScorer: Int32Array;
  /** Per risk level: the pool its scorer stands for (`available` and `chase` set when scoring). */
  views: PackPool[];
  /** Whether the pack could be drawn at each of its risk levels when last scored. */
  wasDrawable: boolean;
  /** Rescore at the next look whatever the interval (an order of ours failed on this pack). */
  mustRescore: boolean;
  /** Per risk level: 1 if the strategy excludes it (its rows wait whatever the pool holds). */
  excluded: Uint8Array;
  /** Per risk level: its last row (null: nothing drawable; undefined: never scored). */
  riskRows: (ScoreRow | null | undefined)[];
  /** Per risk level: 1 if it was drawable when its row was made. */
  riskDrawable: Uint8Array;
  /** Expected pull value (summed over risk levels) when last scored. */
  scoredEv: number;
  /** The pack's rows as last scored (its risk levels' non-null rows). */
  rows: ScoreRow[];
}

/**
 * A pack's state at the start of a path, its band slices viewing the path's `count` and `esum`
 * (cards and odds sums are filled in by the world afterwards).
 */
export function newPackState(
  t: PackTemplate,
  st: PackStart,
  count: Int32Array,
  esum: Float64Array,
): PackState {
  const nb = t.bands.length;
  return {
    chaseP: t.chase ? t.chase.probability : 0,
    chaseCents: t.chase ? toCents(t.chase.card.market_value) : 0,
    chaseHit: false,
    chaseEndsAt: t.chase?.ends_at ? Date.parse(t.chase.ends_at) : Number.POSITIVE_INFINITY,
    cumDirty: true,
    mixTotal: 0,
    ignored: st.ignored,
    gap: 0,
    cardCount: 0,
    changes: 1,
    lookedChanges: 0,
    lookedChase: false,
    b0: st.b0,
    nb,
    t,
    countView: count.subarray(st.b0, st.b0 + nb),
    esumView: esum.subarray(st.b0, st.b0 + nb),
    odds: st.odds,
    live: new Int32Array(t.pools.length),
    cum: new Float64Array(t.pools.length * nb),
    cumTotal: new Float64Array(t.pools.length),
    liveShare: new Float64Array(t.pools.length * nb),
    standard: st.standard,
    // decideOpen never reads a row's growth: only the decision computes it (the scorer's rows).
    scorers: st.scorers.map((s) => s.clone()),
    riskScorer: st.riskScorer,
    // Shared by the worker's paths, which run one after the other: `available` and `chase` are
    // set before every read.
    views: st.views,
    wasDrawable: true,
    mustRescore: false,
    excluded: st.excluded,
    riskRows: t.pools.map(() => undefined),
    riskDrawable: new Uint8Array(t.pools.length),
    scoredEv: 0,
    rows: [],
  };
}

/**
 * Pack p as `newPackState` makes it, for another path of the same world (world-pools.ts `restart`):
 * every field it sets, in place, its arrays refilled rather than made again (the band slices view
 * arrays the world keeps too, so they stay). The scorers start again from the recorded cards'.
 */
export function resetPackState(p: PackState, st: PackStart): void {
  p.chaseHit = false;
  p.cumDirty = true;
  p.mixTotal = 0;
  p.gap = 0;
  p.cardCount = 0;
  p.changes = 1;
  p.lookedChanges = 0;
  p.lookedChase = false;
  p.live.fill(0);
  p.cum.fill(0);
  p.cumTotal.fill(0);
  p.liveShare.fill(0);
  for (let i = 0; i < p.scorers.length; i++) p.scorers[i]!.restartFrom(st.scorers[i]!);
  p.wasDrawable = true;
  p.mustRescore = false;
  p.riskRows.fill(undefined);
  p.riskDrawable.fill(0);
  p.scoredEv = 0;
  p.rows = [];
}

/**
 * Pack p's running odds per risk level over its bands holding cards (`cum`, `cumTotal`) and each
 * band's share of them (`liveShare`), and other users' running mixture over its bands (`mix`, the
 * world's array, at the pack's bands): P(risk level) × its band odds among live bands. `count` is
 * the world's cards per band. Only which bands hold cards matters: the same until one empties or
 * refills (`cumDirty`).
 */
export function rebuildRunningOdds(p: PackState, count: Int32Array, mix: Float64Array): void {
  const nb = p.nb;
  const b0 = p.b0;
  for (let r = 0; r < p.odds.length; r++) {
    const odds = p.odds[r]!;
    const total = runningLiveOdds(odds, count, b0, nb, p.cum, r * nb);
    p.cumTotal[r] = total;
    for (let i = 0; i < nb; i++) {
      const w = liveOdds(odds[i]!, count[b0 + i]!);
      p.liveShare[r * nb + i] = w > 0 ? w / total : 0;
    }
  }
  const nr = p.odds.length;
  mix.fill(0, b0, b0 + nb);
  for (let r = 0; r < nr; r++) {
    const total = p.cumTotal[r]!;
    if (!(total > 0)) continue;
    const pr = othersRiskShare(r, nr, p.standard);
    const odds = p.odds[r]!;
    for (let i = 0; i < nb; i++)
      if (count[b0 + i]! > 0 && odds[i]! > 0) mix[b0 + i] = mix[b0 + i]! + (pr * odds[i]!) / total;
  }
  let acc = 0;
  for (let i = 0; i < nb; i++) {
    acc += mix[b0 + i]!;
    mix[b0 + i] = acc;
  }
  p.mixTotal = acc;
  p.cumDirty = false;
}
