/**
 * Hot-path rounding names for the scorer. `roundHalfAway` of src/core/money.ts already decides
 * clear cases without `toPrecision`; these skip `toCents`'s finiteness check, which scored
 * values (products of validated numbers) never need.
 */
import { roundHalfAway } from '../core/money.js';

export const fastRound = roundHalfAway;
export const fastCents = (usd: number): number => roundHalfAway(usd * 100);
export const fastRate = (cents: number, rate: number): number => roundHalfAway(cents * rate);

const POW10 = [1, 10, 100, 1000, 10000];

/**
 * `x.toFixed(digits)` (digits 0–4) for decision reasons, without `toFixed`'s cost in clear cases:
 * the nearest multiple of 10^−digits by `Math.round`, unless x·10^digits lies within 1e-6 of a
 * half (where the double's exact value decides) or x is negative, too large or not finite — then
 * `toFixed` itself.
 */
export function fixed(x: number, digits: number): string {
  const scale = POW10[digits];
  if (scale === undefined) return x.toFixed(digits);
  const k = x * scale;
  if (!(x >= 0) || !(k < 1e9)) return x.toFixed(digits);
  const frac = k - Math.floor(k);
  if (Math.abs(frac - 0.5) < 1e-6) return x.toFixed(digits);
  const n = Math.round(k);
  if (digits === 0) return `${n}`;
  const whole = Math.floor(n / scale);
  const part = `${n - whole * scale}`;
  return `${whole}.${'0'.repeat(digits - part.length)}${part}`;
}

/** `x.toFixed(3)` (see `fixed`). */
export const fixed3 = (x: number): string => fixed(x, 3);
