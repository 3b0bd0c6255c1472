/**
 * Hot-path rounding for the scorer: identical results to `roundHalfAway` / `toCents` /
 * `applyRate` of src/core/money.ts, which clean binary noise with `toPrecision` (about 1 µs per
 * call: too slow for 10,000-card pools). Only values within 1e-7 of a half cent can be affected by
 * that noise, so only those take the exact path.
 */
import { roundHalfAway } from '../core/money.js';

export function fastRound(x: number): number {
  const frac = x - Math.floor(x);
  if (frac > 0.5 + 1e-7 || frac < 0.5 - 1e-7) return Math.round(x);
  // Near a half: `roundHalfAway` sees a half iff the value prints as one in 15 significant
  // digits. Decide clear cases here (a tie at x.5 is common: 1235 × 0.9, odd cents × 1.5).
  const a = Math.abs(x);
  const whole = Math.floor(a);
  if (whole >= 1) {
    const eps = 0.5 * 10 ** (Math.floor(Math.log10(whole)) + 1 - 15);
    const off = Math.abs(a - whole - 0.5);
    if (off <= eps * 0.1) return x < 0 ? -(whole + 1) : whole + 1;
    if (off >= eps * 10) return Math.round(x);
  }
  return roundHalfAway(x);
}

export const fastCents = (usd: number): number => fastRound(usd * 100);
export const fastRate = (cents: number, rate: number): number => fastRound(cents * rate);
