/**
 * Minimal, strict flag parsing shared by every command (node:util parseArgs underneath): unknown
 * flags and missing values are usage errors, numbers are checked.
 */
import { parseArgs as nodeParseArgs } from 'node:util';
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
