/**
 * The service's time as it keeps and writes it (world `rules.timestamp_fraction_digits`,
 * `rules.timestamp_zone`). A service that writes whole seconds keeps whole seconds: its clock is
 * read at that resolution, so every time it states (a pull, a window's end, the next purchase
 * allowed) is exactly the time its own checks use, and a client acting on a stated time is never
 * refused for a fraction it was not shown.
 */
import type { Rules } from './world-schema.js';

type TimeRules = Pick<Rules, 'timestamp_fraction_digits' | 'timestamp_zone'>;

/** `t` at the service's resolution (a millisecond clock unless fewer than 3 digits are written). */
export function serverTime(rules: TimeRules, t: number): number {
  const digits = rules.timestamp_fraction_digits;
  if (digits >= 3) return t;
  const quantum = 10 ** (3 - digits);
  return Math.floor(t / quantum) * quantum;
}

/** A timestamp as the service writes it: ISO 8601 UTC with the world's digits and zone. */
export function stamp(rules: TimeRules, t: number): string {
  const iso = new Date(serverTime(rules, t)).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = rules.timestamp_fraction_digits;
  const fraction = digits === 0 ? '' : `.${iso.slice(20, 23).padEnd(digits, '0').slice(0, digits)}`;
  return `${iso.slice(0, 19)}${fraction}${rules.timestamp_zone}`;
}
