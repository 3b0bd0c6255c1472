/**
 * `packbot calibrate`'s core: the world's dynamics estimated from a snapshot series, the purchase
 * report over its span and the ledger's listings, each field with its standard error and sample
 * size; fields the data cannot give keep the world's default and say why. A held-out check fits
 * on the first two thirds of the series and predicts the last third. Pure: data in, numbers out.
 */
import type { PurchaseReportRow } from '../../api/schemas.js';
import type { SnapshotFile } from '../../api/snapshot-schema.js';
import { compareText } from '../../core/compare-text.js';
import type { Dynamics } from '../../market/world-schema.js';
import { refillShare } from '../../strategy/market-laws.js';
import { estimateFills, type ListingHistory } from './fills.js';
import { estimateOpenings, type OpeningsEstimate } from './openings.js';
import { bandSteps, chasesGone, estimateRestock } from './restock.js';
import { estimateDrift, type IndexMove, indexMoves } from './values.js';

export const CALIBRATION_FORMAT = 'packbot.calibration/v1';

/** The `dynamics` fields calibration estimates. */
export const ESTIMATED = [
  'others_pack_openings_per_hour',
  'restock_fraction_per_hour',
  'restock_cards_per_hour_per_pack',
  'value_daily_volatility',
  'value_daily_trend',
  'listing_fills_per_day_at_value',
  'listing_price_sensitivity',
] as const;
export type EstimatedField = (typeof ESTIMATED)[number];

export interface CalibrationInput {
  series: readonly SnapshotFile[];
  /** Report rows over the series' span (null: the key cannot read the report). */
  report: readonly PurchaseReportRow[] | null;
  ownUserIds: ReadonlySet<string>;
  listings: readonly ListingHistory[];
  defaults: Dynamics;
}

export interface Calibration {
  format: typeof CALIBRATION_FORMAT;
  dynamics: Record<EstimatedField, number>;
  stderr: Partial<Record<EstimatedField, number>>;
  samples: Record<EstimatedField, number>;
  /** Why a field kept its default. */
  defaulted: Partial<Record<EstimatedField, string>>;
  span: { since: string; until: string; snapshots: number };
  openings: { rows: number; own: number; shares: OpeningsEstimate['shares'] } | null;
  value_by_category: { category: string; volatility: number; trend: number; moves: number }[];
  chases_gone: { pack: string; at: string }[];
  held_out: HeldOut | null;
}

export interface HeldOut {
  fit: { since: string; until: string; snapshots: number };
  test: { since: string; until: string; snapshots: number };
  openings: { pack: string; predicted: number; observed: number }[];
  cards_left: { predicted: number; observed: number; bands: number; mean_abs_error: number };
  price_moves: { category: string; predicted_sd: number; observed_sd: number; moves: number }[];
}

const spanOf = (series: readonly SnapshotFile[]) => ({
  since: series[0]!.taken_at,
  until: series[series.length - 1]!.taken_at,
  snapshots: series.length,
});

const at = (s: SnapshotFile) => Date.parse(s.taken_at);

function openingsOf(input: CalibrationInput, series: readonly SnapshotFile[]): OpeningsEstimate | null {
  if (input.report === null || series.length < 2) return null;
  return estimateOpenings({
    rows: input.report,
    sinceMs: at(series[0]!),
    untilMs: at(series[series.length - 1]!),
    ownUserIds: input.ownUserIds,
    freeFraction: input.defaults.others_free_opening_fraction,
    internalFraction: input.defaults.others_internal_fraction,
  });
}

export function calibrate(input: CalibrationInput): Calibration {
  const { series, defaults } = input;
  const dynamics = Object.fromEntries(ESTIMATED.map((f) => [f, defaults[f]])) as Record<
    EstimatedField,
    number
  >;
  const stderr: Calibration['stderr'] = {};
  const samples = Object.fromEntries(ESTIMATED.map((f) => [f, 0])) as Record<EstimatedField, number>;
  const defaulted: Calibration['defaulted'] = {};
  const set = (f: EstimatedField, value: number, se: number, n: number) => {
    dynamics[f] = value;
    if (Number.isFinite(se)) stderr[f] = se;
    samples[f] = n;
  };

  const openings = openingsOf(input, series);
  if (openings === null)
    defaulted.others_pack_openings_per_hour =
      input.report === null
        ? 'the key cannot read the purchase report (read:pulls)'
        : 'fewer than two snapshots';
  else if (openings.rows === 0) defaulted.others_pack_openings_per_hour = 'no report row in the span';
  else set('others_pack_openings_per_hour', openings.perHour, openings.stderr, openings.rows);

  const moves = indexMoves(series);
  const drift = estimateDrift(moves);
  if (drift.moves < 2) {
    defaulted.value_daily_volatility = 'fewer than two value moves (cards seen in successive snapshots)';
    defaulted.value_daily_trend = defaulted.value_daily_volatility;
  } else {
    set('value_daily_volatility', drift.volatility, drift.volatilityStderr, drift.moves);
    set('value_daily_trend', drift.trend, drift.trendStderr, drift.moves);
  }

  const restock = estimateRestock(bandSteps(series));
  if (!Number.isFinite(restock.fractionPerHour)) {
    defaulted.restock_fraction_per_hour = 'no band with a gap between successive snapshots';
    defaulted.restock_cards_per_hour_per_pack = defaulted.restock_fraction_per_hour;
  } else {
    set('restock_fraction_per_hour', restock.fractionPerHour, restock.fractionStderr, restock.samples);
    set('restock_cards_per_hour_per_pack', restock.cardsPerHourPerPack, restock.cardsStderr, restock.samples);
  }

  const fills = estimateFills(input.listings);
  if (fills === null) {
    defaulted.listing_fills_per_day_at_value = `too few listings in the ledger (${input.listings.length}; at least 5 with 2 sales)`;
    defaulted.listing_price_sensitivity = defaulted.listing_fills_per_day_at_value;
  } else {
    set('listing_fills_per_day_at_value', fills.fillsPerDayAtValue, fills.fillsStderr, fills.listings);
    set('listing_price_sensitivity', fills.sensitivity, fills.sensitivityStderr, fills.listings);
  }

  return {
    format: CALIBRATION_FORMAT,
    dynamics,
    stderr,
    samples,
    defaulted,
    span: spanOf(series),
    openings: openings && { rows: openings.rows, own: openings.own, shares: openings.shares },
    value_by_category: drift.perCategory,
    chases_gone: chasesGone(series),
    held_out: heldOut(input),
  };
}

/** sd of log moves scaled to `hours` each (a volatility per day read back at the interval). */
function sdOf(moves: readonly IndexMove[]): number {
  if (moves.length < 2) return Number.NaN;
  const m = moves.reduce((a, x) => a + x.logMove, 0) / moves.length;
  return Math.sqrt(moves.reduce((a, x) => a + (x.logMove - m) ** 2, 0) / (moves.length - 1));
}

/**
 * Fit on the first two thirds of the series, predict the last third: openings per pack (the
 * fitted report rate × the pack's share × the hours), cards left per band (from the held-out
 * start, the fitted refill and trickle against the cards taken at the fitted rate per band), and
 * the spread of each category's value moves.
 */
function heldOut(input: CalibrationInput): HeldOut | null {
  const { series } = input;
  const cut = Math.floor((series.length * 2) / 3);
  if (cut < 2 || series.length - cut < 1) return null;
  const fitSeries = series.slice(0, cut);
  const testSeries = series.slice(cut - 1);
  const hoursOf = (s: readonly SnapshotFile[]) => (at(s[s.length - 1]!) - at(s[0]!)) / 3_600_000;

  const openings: HeldOut['openings'] = [];
  const fitOpen = openingsOf(input, fitSeries);
  const testOpen = openingsOf(input, testSeries);
  if (fitOpen && testOpen && fitOpen.hours > 0) {
    const perHour = fitOpen.rows / fitOpen.hours;
    const observed = new Map(testOpen.shares.map((s) => [s.pack, s.rows]));
    const packs = new Set([...fitOpen.shares.map((s) => s.pack), ...observed.keys()]);
    for (const pack of packs) {
      const share = fitOpen.shares.find((s) => s.pack === pack)?.share ?? 0;
      openings.push({ pack, predicted: perHour * share * testOpen.hours, observed: observed.get(pack) ?? 0 });
    }
    openings.sort((a, b) => b.observed - a.observed || compareText(a.pack, b.pack));
  }

  // Cards left: taken per hour per band from the fit, then the test span stepped interval by interval.
  const fitSteps = bandSteps(fitSeries);
  const fitRestock = estimateRestock(fitSteps);
  const takenPerHour = new Map<string, number>();
  const fitHours = hoursOf(fitSeries);
  for (const s of fitSteps)
    takenPerHour.set(`${s.pack}#${s.band}`, (takenPerHour.get(`${s.pack}#${s.band}`) ?? 0) + s.taken);
  const testSteps = bandSteps(testSeries);
  const first = new Map<string, { count: number; size: number; pack: string }>();
  const last = new Map<string, number>();
  const firstHours = testSteps.length ? testSteps[0]!.hours : 0;
  for (const s of testSteps) {
    const k = `${s.pack}#${s.band}`;
    if (!first.has(k)) first.set(k, { count: s.before, size: s.size, pack: s.pack });
    last.set(k, s.before - s.taken + s.arrived);
  }
  let predicted = 0;
  let observed = 0;
  let absErr = 0;
  if (Number.isFinite(fitRestock.fractionPerHour) && fitHours > 0 && firstHours > 0) {
    const intervals = testSeries.length - 1;
    const h = hoursOf(testSeries) / intervals;
    const share = refillShare(fitRestock.fractionPerHour, h);
    const counts = new Map([...first].map(([k, v]) => [k, v.count]));
    for (let i = 0; i < intervals; i++) {
      const gapByPack = new Map<string, number>();
      const after = new Map<string, number>();
      for (const [k, v] of first) {
        const taken = ((takenPerHour.get(k) ?? 0) / fitHours) * h;
        const c = Math.max(0, counts.get(k)! - taken);
        after.set(k, c);
        gapByPack.set(v.pack, (gapByPack.get(v.pack) ?? 0) + Math.max(0, v.size - c));
      }
      for (const [k, v] of first) {
        const c = after.get(k)!;
        const gap = Math.max(0, v.size - c);
        const packGap = gapByPack.get(v.pack) ?? 0;
        const trickle = packGap > 0 ? (fitRestock.cardsPerHourPerPack * h * gap) / packGap : 0;
        counts.set(k, Math.min(v.size, c + share * gap + trickle));
      }
    }
    for (const [k, c] of counts) {
      const o = last.get(k) ?? 0;
      predicted += c;
      observed += o;
      absErr += Math.abs(c - o);
    }
  }

  const fitDrift = estimateDrift(indexMoves(fitSeries));
  const testMoves = indexMoves(testSeries);
  const price_moves = [...new Set(testMoves.map((m) => m.category))].sort().map((category) => {
    const own = testMoves.filter((m) => m.category === category);
    const days = own.reduce((a, m) => a + m.days, 0) / Math.max(1, own.length);
    return {
      category,
      predicted_sd: fitDrift.volatility * Math.sqrt(days),
      observed_sd: sdOf(own),
      moves: own.length,
    };
  });

  return {
    fit: spanOf(fitSeries),
    test: spanOf(testSeries),
    openings,
    cards_left: {
      predicted,
      observed,
      bands: first.size,
      mean_abs_error: first.size ? absErr / first.size : 0,
    },
    price_moves,
  };
}
