/**
 * Everything a backtest path needs that does not change from path to path, built once per worker
 * from the snapshot and the strategy: each pool's exact pull distribution with an alias table and
 * the strategy's decision for every atom (static market), the packs merged across risk levels
 * (dynamic market), and the account's limits.
 */
import { DEFAULT_MAX_PACKS_PER_DAY, DEFAULT_MIN_SECONDS_BETWEEN_PURCHASES } from '../../api/rules.js';
import type { PackPool } from '../../api/schemas.js';
import type { SnapshotFile } from '../../api/snapshot-schema.js';
import { DAY_MS, utcDay } from '../../core/clock.js';
import { type Cents, toCents } from '../../core/money.js';
import { AliasTable } from '../../market/sampler.js';
import {
  EmptyPoolError,
  KIND_SEALED,
  type PullDistribution,
  pullDistribution,
} from '../../strategy/distribution.js';
import { type ScoreRow, scorePool } from '../../strategy/score.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import { PullPlans } from './pull-plans.js';

/** The starting balance when the snapshot has no account (DESIGN.md's dev balance). */
const DEFAULT_BALANCE_USD = 10_000;

export interface PoolModel {
  index: number;
  key: string;
  body: PackPool;
  category: string;
  packType: string;
  risk: string;
  priceCents: Cents;
  /** Null when the pool cannot produce a pull (nothing to draw): never opened. */
  dist: PullDistribution | null;
  alias: AliasTable | null;
  /** Plan index (into `plans`) for every atom of `dist`. */
  atomPlan: Int32Array;
  /** The scorer's row without a balance: the analytic numbers of the report. */
  row: ScoreRow | null;
}

export interface Limits {
  maxPacksPerDay: number;
  /** Packs still allowed on the snapshot's UTC day. */
  packsLeftFirstDay: number;
  minSecondsBetween: number;
}

export interface BacktestModel {
  strategy: Strategy;
  snapshot: SnapshotFile;
  startMs: number;
  startBalanceCents: Cents;
  limits: Limits;
  pools: PoolModel[];
  poolIndex: Map<string, number>;
  plans: PullPlans;
  maxQuantity: (category: string, packType: string) => number | undefined;
}

export const poolKey = (category: string, packType: string, risk: string): string =>
  `${category}/${packType}/${risk}`;

export interface ModelOptions {
  /** Starting balance in USD; default the snapshot account's balance, else DEFAULT_BALANCE_USD. */
  balanceUsd?: number;
}

/** `max_quantity` of each pack as the catalog listed it, when the snapshot recorded the catalog. */
function quantityLookup(snapshot: SnapshotFile): (category: string, packType: string) => number | undefined {
  // By category, then pack type: asked for every row a backtest scores, so no key string is built.
  const map = new Map<string, Map<string, number>>();
  const catalog = (snapshot as { catalog?: unknown }).catalog;
  if (Array.isArray(catalog))
    for (const list of catalog as { category?: unknown; packs?: unknown }[]) {
      if (typeof list?.category !== 'string' || !Array.isArray(list.packs)) continue;
      let packs = map.get(list.category);
      if (!packs) {
        packs = new Map();
        map.set(list.category, packs);
      }
      for (const p of list.packs as { pack_type?: unknown; max_quantity?: unknown }[])
        if (typeof p?.pack_type === 'string' && typeof p.max_quantity === 'number')
          packs.set(p.pack_type, p.max_quantity);
    }
  return (category, packType) => map.get(category)?.get(packType);
}

/** A pool body's pull distribution and its alias table (both null when it cannot produce a pull). */
interface PoolDraws {
  dist: PullDistribution | null;
  alias: AliasTable | null;
}

/**
 * By pool body: they depend on the body alone and are never written, so the engines a worker
 * builds from one snapshot object (one per candidate in a search) share them.
 */
const drawsByBody = new WeakMap<PackPool, PoolDraws>();

function poolDraws(body: PackPool): PoolDraws {
  let d = drawsByBody.get(body);
  if (!d) {
    let dist: PullDistribution | null = null;
    try {
      dist = pullDistribution(body);
    } catch (e) {
      if (!(e instanceof EmptyPoolError)) throw e;
    }
    d = { dist, alias: dist ? new AliasTable(dist.prob) : null };
    drawsByBody.set(body, d);
  }
  return d;
}

export function buildModel(
  snapshot: SnapshotFile,
  strategy: Strategy,
  opts: ModelOptions = {},
): BacktestModel {
  const startMs = Date.parse(snapshot.taken_at);
  const plans = new PullPlans(strategy, startMs);
  const maxQuantity = quantityLookup(snapshot);
  const pools: PoolModel[] = [];
  const poolIndex = new Map<string, number>();
  for (const body of snapshot.pools) {
    const key = poolKey(body.category, body.pack_type, body.risk_level);
    if (poolIndex.has(key)) continue; // a duplicate pool body: the first one recorded wins
    const { dist, alias } = poolDraws(body);
    const atomPlan = new Int32Array(dist?.size ?? 0);
    if (dist)
      for (let i = 0; i < dist.size; i++)
        atomPlan[i] = plans.planFor(dist.value[i]!, dist.kind[i] === KIND_SEALED);
    const index = pools.length;
    poolIndex.set(key, index);
    pools.push({
      index,
      key,
      body,
      category: body.category,
      packType: body.pack_type,
      risk: body.risk_level,
      priceCents: toCents(body.price),
      dist,
      alias,
      atomPlan,
      // The distribution held above, not computed again per engine (a pure function of the body).
      row: dist ? scorePool(body, strategy, { maxQuantity, distributionOf: () => dist }) : null,
    });
  }
  const account = snapshot.account;
  const balanceUsd = opts.balanceUsd ?? account?.balance ?? DEFAULT_BALANCE_USD;
  const maxPacksPerDay = account?.limits.max_packs_per_day ?? DEFAULT_MAX_PACKS_PER_DAY;
  // The snapshot's own day keeps what its account had already used; later days start fresh.
  const sameDay = account && utcDay(Date.parse(account.limits.resets_at) - 1) === utcDay(startMs);
  const packsLeftFirstDay = sameDay
    ? Math.min(maxPacksPerDay, account.limits.packs_left_today)
    : maxPacksPerDay;
  return {
    strategy,
    snapshot,
    startMs,
    startBalanceCents: toCents(balanceUsd),
    limits: {
      maxPacksPerDay,
      packsLeftFirstDay,
      minSecondsBetween:
        account?.limits.min_seconds_between_purchases ?? DEFAULT_MIN_SECONDS_BETWEEN_PURCHASES,
    },
    pools,
    poolIndex,
    plans,
    maxQuantity,
  };
}

export const horizonEnd = (model: BacktestModel, days: number): number => model.startMs + days * DAY_MS;
