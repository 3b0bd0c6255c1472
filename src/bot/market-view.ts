/**
 * What the scheduler knows about the service: the account (balance, limits) and the scored pools,
 * each with the time it was read. Reads are paced by the config's cadences; write responses
 * (remaining_balance, 429 bodies) update the view at once, so decisions never wait on a stale read.
 */
import type { PartnerApi } from '../api/partner-api.js';
import type { Account, PackPool } from '../api/schemas.js';
import { toCents } from '../core/money.js';
import type { Logger } from '../obs/logger.js';
import type { Metrics } from '../obs/metrics.js';
import { type ScoreRow, scorePools } from '../strategy/score.js';
import type { Strategy } from '../strategy/strategy-schema.js';

export interface AccountView {
  balanceCents: number;
  packsLeftToday: number;
  nextPurchaseAt: number;
  resetsAt: number;
  minSecondsBetween: number;
  readAt: number;
}

export function accountView(a: Account, readAt: number): AccountView {
  return {
    balanceCents: toCents(a.balance),
    packsLeftToday: a.limits.packs_left_today,
    nextPurchaseAt: Date.parse(a.limits.next_purchase_at),
    resetsAt: Date.parse(a.limits.resets_at),
    minSecondsBetween: a.limits.min_seconds_between_purchases,
    readAt,
  };
}

/** Reads every pool the strategy could open (available packs, its risk levels). */
export async function readPools(
  api: PartnerApi,
  strategy: Strategy,
): Promise<{ pools: PackPool[]; maxQuantity: Map<string, number> }> {
  const pools: PackPool[] = [];
  const maxQuantity = new Map<string, number>();
  const { categories, include, exclude, risk_levels } = strategy.packs;
  for (const category of categories) {
    const list = await api.listPacks({ category });
    for (const pack of list.packs) {
      if (!pack.available) continue;
      if (exclude.includes(pack.pack_type)) continue;
      if (include.length > 0 && !include.includes(pack.pack_type)) continue;
      maxQuantity.set(`${category}/${pack.pack_type}`, pack.max_quantity);
      for (const risk of pack.risk_levels) {
        if (!(risk_levels as readonly string[]).includes(risk)) continue;
        pools.push(await api.getPackPool({ pack_type: pack.pack_type, category, risk_level: risk }));
      }
    }
  }
  return { pools, maxQuantity };
}

export function scoreView(
  pools: readonly PackPool[],
  maxQuantity: ReadonlyMap<string, number>,
  strategy: Strategy,
  balanceCents: number,
  metrics: Metrics,
  log: Logger,
): ScoreRow[] {
  const rows = scorePools(pools, strategy, {
    balanceCents,
    maxQuantity: (c, p) => maxQuantity.get(`${c}/${p}`),
    onSkip: (pool, e) => log.debug({ pack_type: pool.pack_type, risk: pool.risk_level }, e.message),
  });
  metrics.setKnownPackTypes(rows.map((r) => r.pack_type));
  for (const r of rows)
    if (r.realized_ev_ratio !== null)
      metrics.packEv(r.category, r.pack_type, r.risk_level, r.realized_ev_ratio);
  return rows;
}
