/**
 * The agreement harness's two worlds: the default world (config/sim.yaml) and agreement/fast-world.yaml
 * (other stock, every dynamic moved). Each is snapshotted in-process as `packbot snapshot` records
 * it (takeSnapshot on the simulator at a fixed virtual instant and seed, so a seed of the harness
 * always sees the same pools), and carries the dynamics and seller fee its backtests and live bots
 * run with, and by which a strategy's beliefs are judged.
 */
import { join } from 'node:path';
import type { SnapshotFile } from '../src/api/snapshot-schema.js';
import { takeSnapshot } from '../src/backtest/snapshot/snapshot.js';
import type { DynamicsInput } from '../src/backtest/world/dynamic-market.js';
import { packageRoot } from '../src/config/package-root.js';
import { DEFAULT_WORLD_PATH, loadWorld } from '../src/config/world-file.js';
import { VirtualClock } from '../src/core/clock.js';
import { Market } from '../src/market/market.js';
import type { World } from '../src/market/world-schema.js';
import type { Strategy } from '../src/strategy/strategy-schema.js';

export const WORLD_NAMES = ['default', 'fast'] as const;
export type WorldName = (typeof WORLD_NAMES)[number];

/** Where every snapshot is taken (and so where every backtest and live run starts). */
const SNAPSHOT_AT = '2026-03-02T10:00:00Z';
/** The simulator's seed for the snapshots (the default world's cards are generated from it). */
export const SNAPSHOT_SEED = 1;

const FAST_WORLD_PATH = join(packageRoot(), 'agreement', 'fast-world.yaml');

export interface AgreementWorld {
  name: WorldName;
  /** The world file (what `packbot backtest --dynamics` takes to rerun a row). */
  file: string;
  world: World;
  snapshot: SnapshotFile;
  /**
   * The world's own dynamics, given to every backtest of it: a snapshot carries none, and the
   * backtest's defaults are the schema's, not config/sim.yaml's (restock 3 cards an hour, not 1).
   */
  dynamics: DynamicsInput;
}

async function snapshotOf(world: World, source: string): Promise<SnapshotFile> {
  const clock = new VirtualClock(SNAPSHOT_AT);
  const market = new Market(world, { clock, seed: SNAPSHOT_SEED });
  return takeSnapshot(market.api('sk_sim_full'), { clock, source });
}

export async function agreementWorlds(): Promise<AgreementWorld[]> {
  const files: Record<WorldName, string> = { default: DEFAULT_WORLD_PATH, fast: FAST_WORLD_PATH };
  const out: AgreementWorld[] = [];
  for (const name of WORLD_NAMES) {
    const world = loadWorld(files[name]);
    out.push({
      name,
      file: files[name],
      world,
      snapshot: await snapshotOf(world, `${name} world (agreement), seed ${SNAPSHOT_SEED}`),
      dynamics: { ...world.dynamics },
    });
  }
  return out;
}

/** What a strategy believes of a market (its listing life's inputs), in the world's terms. */
export interface Belief {
  fills_per_day_at_value: number;
  price_sensitivity: number;
  daily_volatility: number;
  daily_trend: number;
  seller_fee_rate: number;
}

export function beliefOf(world: World): Belief {
  return {
    fills_per_day_at_value: world.dynamics.listing_fills_per_day_at_value,
    price_sensitivity: world.dynamics.listing_price_sensitivity,
    daily_volatility: world.dynamics.value_daily_volatility,
    daily_trend: world.dynamics.value_daily_trend,
    seller_fee_rate: world.rules.seller_fee_rate,
  };
}

/**
 * Whether the strategy's listing life is priced on this world's market: the world's fill hazard,
 * value drift and seller fee. Only then can its scorer promise what this world pays for a listed
 * pull; a strategy that believes another market is still judged on what does not depend on it.
 */
export function believes(strategy: Strategy, world: World): boolean {
  const b = beliefOf(world);
  const list = strategy.sell.list;
  return (
    list.fill.model === 'hazard' &&
    list.fill.fills_per_day_at_value === b.fills_per_day_at_value &&
    list.fill.price_sensitivity === b.price_sensitivity &&
    list.value_drift.daily_volatility === b.daily_volatility &&
    list.value_drift.daily_trend === b.daily_trend &&
    list.seller_fee_rate === b.seller_fee_rate
  );
}
