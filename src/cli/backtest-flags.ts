/**
 * The flags `packbot backtest` and `packbot optimize` share, read one way for both: the market,
 * the starting balance and `--dynamics` (so a calibrated world file serves either command).
 */
import { z } from 'zod';
import type { DynamicsInput } from '../backtest/world/dynamic-market.js';
import { readSource, validateSource } from '../config/load.js';
import { loadWorld } from '../config/world-file.js';
import { UsageError } from '../core/errors.js';
import { DynamicsSpec, WORLD_FORMAT } from '../market/world-schema.js';

/** A bare `--dynamics` object: the world's dynamics fields and the backtest engine's own two. */
const BacktestDynamics = DynamicsSpec.partial().extend({
  rescore_minutes: z
    .number()
    .positive()
    .max(1440)
    .optional()
    .describe('least time between two rescores of a pack'),
  card_sync_minutes: z.number().positive().max(1440).optional().describe('how often the bot syncs the shop'),
});

/**
 * `--dynamics F`: a world file (its resolved `dynamics`, e.g. `packbot calibrate`'s output) or a
 * bare object of `dynamics` fields, `rescore_minutes` and `card_sync_minutes`.
 */
export function loadDynamics(file: string): DynamicsInput {
  const src = readSource(file);
  const data = src.data as { format?: unknown } | null;
  if (data !== null && typeof data === 'object' && data.format === WORLD_FORMAT)
    return loadWorld(file).dynamics;
  return validateSource(src, BacktestDynamics) as DynamicsInput;
}

/** `--market`: `dynamic` unless given. */
export function marketFlag(value: string | undefined): 'static' | 'dynamic' {
  const market = value ?? 'dynamic';
  if (market !== 'static' && market !== 'dynamic')
    throw new UsageError(`--market must be static or dynamic, got '${market}'`);
  return market;
}

/** `--balance USD`: whole dollars or dollars and cents; undefined when not given. */
export function balanceFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const usd = Number(value);
  if (!/^\d+(\.\d{1,2})?$/.test(value) || !Number.isFinite(usd))
    throw new UsageError(`--balance must be a USD amount such as 5000 or 99.50, got '${value}'`);
  return usd;
}
