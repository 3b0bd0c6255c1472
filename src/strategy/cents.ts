/**
 * Hot-path rounding names for the scorer. `roundHalfAway` of src/core/money.ts already decides
 * clear cases without `toPrecision`; these skip `toCents`'s finiteness check, which scored
 * values (products of validated numbers) never need.
 */
import { roundHalfAway } from '../core/money.js';

export const fastRound = roundHalfAway;
export const fastCents = (usd: number): number => roundHalfAway(usd * 100);
export const fastRate = (cents: number, rate: number): number => roundHalfAway(cents * rate);
