/**
 * Minimal, strict flag parsing shared by every command (node:util parseArgs underneath): unknown
 * flags and missing values are usage errors, numbers are checked.
 */
import { parseArgs as nodeParseArgs } from 'node:util';
import { CATEGORIES, type Category } from '../api/schemas.js';
import { UsageError } from '../core/errors.js';

export type FlagSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

export function parseFlags<S extends FlagSpec>(argv: string[], spec: S, command: string) {
  try {
    return nodeParseArgs({ args: argv, options: spec, strict: true, allowPositionals: true });
  } catch (e) {
    throw new UsageError(`${command}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export function intFlag(
  value: string | undefined,
  name: string,
  fallback: number,
  bounds: { min?: number; max?: number } = {},
): number {
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${name} must be an integer, got '${value}'`);
  const n = Number.parseInt(value, 10);
  if (bounds.min !== undefined && n < bounds.min)
    throw new UsageError(`--${name} must be at least ${bounds.min}`);
  if (bounds.max !== undefined && n > bounds.max)
    throw new UsageError(`--${name} must be at most ${bounds.max}`);
  return n;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30s`, `15m`, `1h`, `7d` (a positive whole number and a unit) in milliseconds. */
export function durationFlag(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)([smhd])$/.exec(value.trim());
  if (!m || Number(m[1]) <= 0)
    throw new UsageError(
      `--${name} must be a positive whole number with a unit s, m, h or d (e.g. 1h, 7d), got '${value}'`,
    );
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** `a,b`: categories of the API, each checked. */
export function categoriesFlag(value: string | undefined): Category[] | undefined {
  if (value === undefined) return undefined;
  const categories = value.split(',').map((c) => c.trim());
  for (const c of categories)
    if (!(CATEGORIES as readonly string[]).includes(c))
      throw new UsageError(`--categories: unknown category '${c}' (one of ${CATEGORIES.join(', ')})`);
  return categories as Category[];
}
