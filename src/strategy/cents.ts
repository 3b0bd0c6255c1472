/**
 * Hot-path rounding names for the scorer. `roundHalfAway` of src/core/money.ts already decides
 * clear cases without `toPrecision`; these skip `toCents`'s finiteness check, which scored
 * values (products of validated numbers) never need.
 */
import { roundHalfAway } from '../core/money.js';

export const fastRound = roundHalfAway;
export const fastCents = (usd: number): number => roundHalfAway(usd * 100);
export const fastRate = (cents: number, rate: number): number => roundHalfAway(cents * rate);

/**
 * `x.toFixed(3)` for the scorer's wait reasons, without `toFixed`'s cost in clear cases: the
 * nearest thousandth by `Math.round`, unless x·1000 lies within 1e-6 of a half (where the double's
 * exact value decides) or x is negative, ≥ 10⁶ or not finite — then `toFixed` itself.
 */
export function fixed3(x: number): string {
  const k = x * 1000;
  if (!(x >= 0) || !(k < 1e9)) return x.toFixed(3);
  const frac = k - Math.floor(k);
  if (Math.abs(frac - 0.5) < 1e-6) return x.toFixed(3);
  const n = Math.round(k);
  const whole = Math.floor(n / 1000);
  const milli = n - whole * 1000;
  return `${whole}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}`;
}
