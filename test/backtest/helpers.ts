import type { Account, PackPool } from '../../src/api/schemas.js';
import { SNAPSHOT_FORMAT, type SnapshotFile } from '../../src/api/snapshot-schema.js';

const TAKEN_AT = '2026-03-02T10:30:00.000Z';

export function account(over: Partial<Account['limits']> = {}, balance = 100_000): Account {
  return {
    username: 'tester',
    balance,
    limits: {
      packs_today: 0,
      max_packs_per_day: 100,
      packs_left_today: 100,
      resets_at: '2026-03-03T00:00:00.000Z',
      min_seconds_between_purchases: 60,
      next_purchase_at: TAKEN_AT,
      ...over,
    },
  };
}

export function snapshot(pools: PackPool[], acct: Account | null = account()): SnapshotFile {
  return { format: SNAPSHOT_FORMAT, taken_at: TAKEN_AT, source: 'test', account: acct, pools };
}
