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
import { type ScoreRow, scorePools } from '../../strategy/score.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { PoolCardInterner } from './card-interner.js';

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
 * Reads every pool the strategy could open (available packs, its risk levels), with the pack list.
 * With `interner`, cards equal to ones it keeps are shared (a long-running reader's memory).
 */
export async function readPools(
  api: PartnerApi,
  strategy: Strategy,
  interner?: PoolCardInterner,
): Promise<PoolsRead> {
  try {
    return await readAll(api, strategy, interner);
  } finally {
    interner?.endRead();
  }
}

async function readAll(api: PartnerApi, strategy: Strategy, interner?: PoolCardInterner): Promise<PoolsRead> {
  const pools: PackPool[] = [];
  const maxQuantity = new Map<string, number>();
  const listPriceCents = new Map<string, number>();
  const { categories, include, exclude, risk_levels } = strategy.packs;
  for (const category of categories) {
    const list = await api.listPacks({ category });
    for (const pack of list.packs) {
      if (!pack.available) continue;
      if (exclude.includes(pack.pack_type)) continue;
      if (include.length > 0 && !include.includes(pack.pack_type)) continue;
      maxQuantity.set(`${category}/${pack.pack_type}`, pack.max_quantity);
      listPriceCents.set(`${category}/${pack.pack_type}`, toCents(pack.price));
      for (const risk of pack.risk_levels) {
        if (!(risk_levels as readonly string[]).includes(risk)) continue;
        const pool = await api.getPackPool({ pack_type: pack.pack_type, category, risk_level: risk });
        pools.push(interner ? interner.pool(pool) : pool);
      }
    }
  }
  return { pools, maxQuantity, listPriceCents };
}

/** Pool reads whose rejections were counted: a read is scored at every slot, counted once. */
const counted = new WeakSet<readonly PackPool[]>();

/**
 * Scores one pool read. Without `listPriceCents` (a caller that did not read the pack list) the
 * pools are checked against themselves only.
 */
export function scoreView(
  pools: readonly PackPool[],
  maxQuantity: ReadonlyMap<string, number>,
  strategy: Strategy,
  balanceCents: number,
  metrics: Metrics,
  log: Logger,
  listPriceCents?: ReadonlyMap<string, number>,
): ScoreRow[] {
  const rows = scorePools(pools, strategy, {
    balanceCents,
    maxQuantity: (c, p) => maxQuantity.get(`${c}/${p}`),
    ...(listPriceCents ? { listPriceCents: (c: string, p: string) => listPriceCents.get(`${c}/${p}`) } : {}),
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
