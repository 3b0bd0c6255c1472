/**
 * What the scheduler knows about the service: the account (balance, limits) and the scored pools,
 * each with the time it was read. Reads are paced by the config's cadences; write responses
 * (remaining_balance, 429 bodies) update the view at once, so decisions never wait on a stale read.
 */
import type { PartnerApi } from '../../api/partner-api.js';
import type { Account, PackPool } from '../../api/schemas.js';
import { toCents } from '../../core/money.js';
import type { Logger } from '../../obs/logger.js';
import type { Metrics } from '../../obs/metrics.js';
import type { PullDistribution } from '../../strategy/distribution.js';
import { type ScoreRow, scorePools } from '../../strategy/score.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import { opens, opensPack, type SharedCatalog } from './catalog.js';

export interface AccountView {
  balanceCents: number;
  packsLeftToday: number;
  nextPurchaseAt: number;
  resetsAt: number;
  minSecondsBetween: number;
  /** The service's daily ceiling and count (shown by the read API). */
  maxPacksPerDay: number;
  packsToday: number;
  readAt: number;
}

export function accountView(a: Account, readAt: number): AccountView {
  return {
    balanceCents: toCents(a.balance),
    packsLeftToday: a.limits.packs_left_today,
    nextPurchaseAt: Date.parse(a.limits.next_purchase_at),
    resetsAt: Date.parse(a.limits.resets_at),
    minSecondsBetween: a.limits.min_seconds_between_purchases,
    maxPacksPerDay: a.limits.max_packs_per_day,
    packsToday: a.limits.packs_today,
    readAt,
  };
}

export interface PoolsRead {
  pools: PackPool[];
  /** `category/pack_type` → the pack list's `max_quantity`. */
  maxQuantity: Map<string, number>;
  /** `category/pack_type` → the pack list's `price` in cents: what is charged (spec). */
  listPriceCents: Map<string, number>;
}

/**
 * Every pool the strategy could open (available packs, its risk levels), with the pack list, from
 * the catalog's reads made at or after `notBefore` (shared with the runner's other accounts).
 * `readAt`: when the oldest of those reads came back.
 */
export async function readPools(
  catalog: SharedCatalog,
  api: PartnerApi,
  strategy: Strategy,
  notBefore = Number.NEGATIVE_INFINITY,
): Promise<PoolsRead & { readAt: number }> {
  const pools: PackPool[] = [];
  const maxQuantity = new Map<string, number>();
  const listPriceCents = new Map<string, number>();
  let readAt = Number.POSITIVE_INFINITY;
  for (const category of strategy.packs.categories) {
    const read = await catalog.category(api, category, strategy, notBefore);
    readAt = Math.min(readAt, read.readAt);
    for (const pack of read.packs.values()) {
      if (!opensPack(strategy, category, pack.pack_type)) continue;
      const key = `${category}/${pack.pack_type}`;
      maxQuantity.set(key, pack.max_quantity);
      listPriceCents.set(key, toCents(pack.price));
      for (const risk of pack.risk_levels) {
        const pool = opens(strategy, category, pack.pack_type, risk)
          ? read.pools.get(`${pack.pack_type}/${risk}`)
          : undefined;
        if (pool) pools.push(pool);
      }
    }
  }
  return { pools, maxQuantity, listPriceCents, readAt };
}

/** Pool reads whose rejections were counted: a read is scored at every slot, counted once. */
const counted = new WeakSet<readonly PackPool[]>();

/** What one account scores: a pool read, at its balance, with the catalog's distributions. */
export interface ScoreInput {
  read: PoolsRead;
  strategy: Strategy;
  balanceCents: number;
  metrics: Metrics;
  log: Logger;
  /** The pool's pull distribution, kept once per pool read for every account (SharedCatalog). */
  distributionOf?: (pool: PackPool) => PullDistribution;
}

/** Scores one pool read for one account; rejected pools are counted once per read. */
export function scoreView(input: ScoreInput): ScoreRow[] {
  const { read, strategy, balanceCents, metrics, log } = input;
  const { pools, maxQuantity, listPriceCents } = read;
  const rows = scorePools(pools, strategy, {
    balanceCents,
    maxQuantity: (c, p) => maxQuantity.get(`${c}/${p}`),
    listPriceCents: (c, p) => listPriceCents.get(`${c}/${p}`),
    ...(input.distributionOf ? { distributionOf: input.distributionOf } : {}),
    onSkip: (pool, e) => log.debug({ pack_type: pool.pack_type, risk: pool.risk_level }, e.message),
  });
  metrics.setKnownPackTypes(rows.map((r) => r.pack_type));
  if (!counted.has(pools)) {
    counted.add(pools);
    for (const r of rows)
      if (r.decision.action === 'wait' && r.decision.integrity) {
        metrics.poolRejected(r.decision.integrity);
        log.warn(
          { category: r.category, pack_type: r.pack_type, risk: r.risk_level, reason: r.decision.integrity },
          `pool not opened: ${r.decision.reason}`,
        );
      }
  }
  for (const r of rows)
    if (r.realized_ev_ratio !== null)
      metrics.packEv(r.category, r.pack_type, r.risk_level, r.realized_ev_ratio);
  return rows;
}
