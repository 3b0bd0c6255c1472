/**
 * `packbot.snapshot/v1` (DESIGN.md): pools stored exactly as the API returned them, one per
 * category × pack_type × risk_level, plus the account. Hand-written snapshots are welcome, so
 * every pool is validated with the API's own schema.
 */
import { z } from 'zod';
import { Account, PackList, PackPool, Timestamp } from './schemas.js';

export const SNAPSHOT_FORMAT = 'packbot.snapshot/v1';

export const SnapshotFile = z.looseObject({
  format: z.literal(SNAPSHOT_FORMAT),
  taken_at: Timestamp,
  source: z.string(),
  account: Account.nullable(),
  pools: z.array(PackPool),
  /** Optional: the pack lists as recorded (`GET /catalog/packs` bodies), for `max_quantity`. */
  catalog: z.array(PackList).optional(),
});
export type SnapshotFile = z.infer<typeof SnapshotFile>;
