/**
 * Restock from successive snapshots. A band's cards are listed in full in its pool (by id), so
 * between two snapshots the ids that appear are arrivals and the ids that go are openings (ours
 * and others'). The world refills each band's gap to its initial size by a share
 * 1 − e^(−rate·dt) per tick, plus a trickle of arrivals per pack into bands in proportion to their
 * gaps. The initial size is not shown: the largest count seen in the series stands for it (a
 * series that starts with the bands full sees it exactly). Arrivals A over an interval are fitted
 * as A ≈ φ·G + a·u by least squares over every band and interval, with G the gap the refill saw
 * (size − count + cards taken) and u the trickle's expected share (hours × the band's share of its
 * pack's gap); rate = −ln(1 − φ)/hours.
 */
import type { SnapshotFile } from '../../api/snapshot-schema.js';

const HOUR_MS = 3_600_000;

/** A pack's bands in one snapshot: band id → card ids (every risk level's pool merged). */
export type PackBands = Map<string, Set<string>>;

/** Every pack's bands per snapshot: `category/pack_type` → bands. */
function bandsOf(s: SnapshotFile): Map<string, PackBands> {
  const out = new Map<string, PackBands>();
  for (const p of s.pools) {
    const key = `${p.category}/${p.pack_type}`;
    let bands = out.get(key);
    if (!bands) {
      bands = new Map();
      out.set(key, bands);
    }
    for (const b of p.bands) if (!bands.has(b.bucket_id)) bands.set(b.bucket_id, new Set());
    for (const c of p.cards) bands.get(c.bucket_id)?.add(c.id);
  }
  return out;
}

export interface BandStep {
  pack: string;
  band: string;
  hours: number;
  /** Cards at the start, taken (ids gone), arrived (ids new), and the band's size estimate. */
  before: number;
  taken: number;
  arrived: number;
  size: number;
  /** The refill's gap (size − before + taken) and the trickle's expected share (hours × gap share). */
  gap: number;
  trickle: number;
}

/** Per band and interval, what came and went; sizes are the largest counts over the whole series. */
export function bandSteps(series: readonly SnapshotFile[]): BandStep[] {
  const all = series.map(bandsOf);
  const size = new Map<string, number>();
  for (const packs of all)
    for (const [pack, bands] of packs)
      for (const [band, ids] of bands) {
        const k = `${pack}#${band}`;
        size.set(k, Math.max(size.get(k) ?? 0, ids.size));
      }
  const steps: BandStep[] = [];
  for (let k = 1; k < all.length; k++) {
    const hours = (Date.parse(series[k]!.taken_at) - Date.parse(series[k - 1]!.taken_at)) / HOUR_MS;
    if (!(hours > 0)) continue;
    for (const [pack, bands] of all[k - 1]!) {
      const after = all[k]!.get(pack);
      if (!after) continue;
      const rows: BandStep[] = [];
      for (const [band, ids] of bands) {
        const next = after.get(band);
        if (!next) continue;
        let taken = 0;
        for (const id of ids) if (!next.has(id)) taken++;
        let arrived = 0;
        for (const id of next) if (!ids.has(id)) arrived++;
        const s = size.get(`${pack}#${band}`)!;
        const gap = Math.max(0, s - ids.size + taken);
        rows.push({ pack, band, hours, before: ids.size, taken, arrived, size: s, gap, trickle: 0 });
      }
      const packGap = rows.reduce((a, r) => a + r.gap, 0);
      for (const r of rows) r.trickle = packGap > 0 ? (hours * r.gap) / packGap : 0;
      steps.push(...rows);
    }
  }
  return steps;
}

export interface RestockEstimate {
  fractionPerHour: number;
  fractionStderr: number;
  cardsPerHourPerPack: number;
  cardsStderr: number;
  /** Band-intervals with a gap (the regression's sample). */
  samples: number;
}

/** Least squares of arrivals on (gap, trickle share), no intercept: the refill share and the trickle rate. */
export function estimateRestock(steps: readonly BandStep[]): RestockEstimate {
  const used = steps.filter((s) => s.gap > 0);
  let sgg = 0;
  let sgu = 0;
  let suu = 0;
  let sga = 0;
  let sua = 0;
  for (const s of used) {
    sgg += s.gap * s.gap;
    sgu += s.gap * s.trickle;
    suu += s.trickle * s.trickle;
    sga += s.gap * s.arrived;
    sua += s.trickle * s.arrived;
  }
  const det = sgg * suu - sgu * sgu;
  const n = used.length;
  if (n < 3 || !(det > 1e-12))
    return {
      fractionPerHour: Number.NaN,
      fractionStderr: Number.NaN,
      cardsPerHourPerPack: Number.NaN,
      cardsStderr: Number.NaN,
      samples: n,
    };
  const phi = (suu * sga - sgu * sua) / det;
  const a = (sgg * sua - sgu * sga) / det;
  let rss = 0;
  for (const s of used) rss += (s.arrived - phi * s.gap - a * s.trickle) ** 2;
  const s2 = rss / (n - 2);
  const sePhi = Math.sqrt((s2 * suu) / det);
  const seA = Math.sqrt((s2 * sgg) / det);
  const hours = used.reduce((x, s) => x + s.hours, 0) / n;
  const share = Math.min(Math.max(phi, 0), 1 - 1e-9);
  const rate = -Math.log(1 - share) / hours;
  return {
    fractionPerHour: rate,
    // d rate / d φ = 1 / (hours · (1 − φ)).
    fractionStderr: sePhi / (hours * (1 - share)),
    cardsPerHourPerPack: Math.max(0, a),
    cardsStderr: seA,
    samples: n,
  };
}

/** Chases seen to go (a pool's chase there, then gone), per pack. */
export function chasesGone(series: readonly SnapshotFile[]): { pack: string; at: string }[] {
  const out: { pack: string; at: string }[] = [];
  for (let k = 1; k < series.length; k++) {
    const had = new Set(
      series[k - 1]!.pools.filter((p) => p.chase).map((p) => `${p.category}/${p.pack_type}`),
    );
    const has = new Set(series[k]!.pools.filter((p) => p.chase).map((p) => `${p.category}/${p.pack_type}`));
    for (const pack of had) if (!has.has(pack)) out.push({ pack, at: series[k]!.taken_at });
  }
  return out;
}
