/**
 * Whether a strategy can trade anything in a snapshot: every pack it includes must be there (for
 * its categories and risk levels) and at least one pool must be in its scope. A reason when not.
 */
import type { SnapshotFile } from '../../api/snapshot-schema.js';
import type { Strategy } from '../../strategy/strategy-schema.js';

export interface Misfit {
  /** The strategy field at fault. */
  field: string;
  message: string;
}

export function strategyMisfit(strategy: Strategy, snapshot: SnapshotFile): Misfit | null {
  const p = strategy.packs;
  const inScope = snapshot.pools.filter(
    (pool) =>
      (p.categories as readonly string[]).includes(pool.category) &&
      (p.risk_levels as readonly string[]).includes(pool.risk_level),
  );
  const types = new Set(inScope.map((pool) => pool.pack_type));
  for (const name of p.include)
    if (!types.has(name))
      return {
        field: 'packs.include',
        message:
          `pack '${name}' is not in the snapshot ` +
          `(for the strategy's categories and risk levels it has: ${[...types].join(', ') || 'none'})`,
      };
  const usable = inScope.filter(
    (pool) =>
      !p.exclude.includes(pool.pack_type) && (p.include.length === 0 || p.include.includes(pool.pack_type)),
  );
  if (usable.length === 0)
    return {
      field: 'packs',
      message:
        'the strategy names no pack of the snapshot ' +
        `(snapshot categories: ${[...new Set(snapshot.pools.map((x) => x.category))].join(', ') || 'none'})`,
    };
  return null;
}
