/**
 * The listing fill law from our own listings (the ledger): buyers arrive at
 * base · exp(−sensitivity · (price/value − 1)) per day. Each listing is a run of price segments
 * (created, repriced) ending in a sale or, censored, in a delisting (or still active now). The
 * log-likelihood Σ_sales log λ − Σ_segments λ·t is maximised over (log base, sensitivity) by
 * Newton's method; standard errors from the observed information.
 */

const DAY_MS = 86_400_000;

export interface ListingSegment {
  /** price / value at listing, and days at that price. */
  ratio: number;
  days: number;
}

export interface ListingHistory {
  segments: ListingSegment[];
  /** Whether it ended in a sale (else delisted or still listed: censored). */
  sold: boolean;
}

export interface FillEstimate {
  fillsPerDayAtValue: number;
  fillsStderr: number;
  sensitivity: number;
  sensitivityStderr: number;
  listings: number;
  sales: number;
}

/** A listing's segments from its events (created/repriced prices with times) and its end. */
export function segmentsOf(
  valueCents: number,
  events: readonly { priceCents: number; at: number }[],
  endAt: number,
): ListingSegment[] {
  const out: ListingSegment[] = [];
  for (let i = 0; i < events.length; i++) {
    const from = events[i]!.at;
    const to = i + 1 < events.length ? events[i + 1]!.at : endAt;
    if (to > from && valueCents > 0)
      out.push({ ratio: events[i]!.priceCents / valueCents, days: (to - from) / DAY_MS });
  }
  return out;
}

export function estimateFills(listings: readonly ListingHistory[]): FillEstimate | null {
  const sales = listings.filter((l) => l.sold).length;
  if (listings.length < 5 || sales < 2) return null;
  // θ = (log base, sensitivity); rate of a segment = exp(θ0 − θ1·(r − 1)).
  let t0 = Math.log(1);
  let t1 = 4;
  let info: number[] = [1, 0, 1];
  for (let iter = 0; iter < 100; iter++) {
    let g0 = 0;
    let g1 = 0;
    let h00 = 0;
    let h01 = 0;
    let h11 = 0;
    for (const l of listings) {
      for (const s of l.segments) {
        const x = s.ratio - 1;
        const lt = Math.exp(t0 - t1 * x) * s.days;
        g0 -= lt;
        g1 += lt * x;
        h00 += lt;
        h01 -= lt * x;
        h11 += lt * x * x;
      }
      if (l.sold) {
        const last = l.segments[l.segments.length - 1];
        if (last) {
          g0 += 1;
          g1 -= last.ratio - 1;
        }
      }
    }
    // Newton on the concave log-likelihood: θ += H⁻¹ g (H = observed information).
    const det = h00 * h11 - h01 * h01;
    if (!(det > 0)) break;
    const d0 = (h11 * g0 - h01 * g1) / det;
    const d1 = (h00 * g1 - h01 * g0) / det;
    t0 += d0;
    t1 += d1;
    info = [h00, h01, h11];
    if (Math.abs(d0) + Math.abs(d1) < 1e-10) break;
  }
  const [h00, h01, h11] = info as [number, number, number];
  const det = h00 * h11 - h01 * h01;
  const base = Math.exp(t0);
  return {
    fillsPerDayAtValue: base,
    fillsStderr: det > 0 ? base * Math.sqrt(h11 / det) : Number.NaN,
    sensitivity: t1,
    sensitivityStderr: det > 0 ? Math.sqrt(h00 / det) : Number.NaN,
    listings: listings.length,
    sales,
  };
}
