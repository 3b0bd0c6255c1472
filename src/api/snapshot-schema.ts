/**
 * Snapshot files (DESIGN.md): pools stored exactly as the API returned them, one per
 * category × pack_type × risk_level, plus the account. Hand-written snapshots are welcome, so
 * every pool is validated with the API's own schema.
 *
 * `packbot.snapshot/v2` adds what calibration needs: `taken_at` is the server's time (its `Date`
 * header), not the recorder's (`local_time` keeps that), so a series lines up with the purchase
 * report; and `shop` holds every category's shop stock (null when the recorder skipped it).
 * `packbot.snapshot/v1` files (no `shop`, `taken_at` from the local clock) are still read.
 */
import { z } from 'zod';
import { Account, PackList, PackPool, ShopCard, Timestamp } from './schemas.js';

export const SNAPSHOT_FORMAT_V1 = 'packbot.snapshot/v1';
export const SNAPSHOT_FORMAT = 'packbot.snapshot/v2';
const SNAPSHOT_FORMATS = [SNAPSHOT_FORMAT_V1, SNAPSHOT_FORMAT] as const;

/** One category's shop stock: every page of `GET /catalog/cards` merged, cards as returned. */
export const ShopStock = z.looseObject({
  category: z.string(),
  /** The `total` the service gave on the first page. */
  total: z.number().int().nonnegative(),
  cards: z.array(ShopCard),
});
export type ShopStock = z.infer<typeof ShopStock>;

export const SnapshotFile = z.looseObject({
  format: z.enum(SNAPSHOT_FORMATS),
  /** v2: the server's time when the recording started; v1: the recorder's clock. */
  taken_at: Timestamp,
  /** v2: the recorder's own clock at the same instant (how far it is from the server's). */
  local_time: Timestamp.optional(),
  /** v2: where `taken_at` came from: the server's `Date` header, or the local clock when it sent none. */
  time_source: z.enum(['server', 'local']).optional(),
  source: z.string(),
  account: Account.nullable(),
  pools: z.array(PackPool),
  /** Optional: the pack lists as recorded (`GET /catalog/packs` bodies), for `max_quantity`. */
  catalog: z.array(PackList).optional(),
  /** v2: shop stock per recorded category; null or absent when not recorded. */
  shop: z.array(ShopStock).nullable().optional(),
});
export type SnapshotFile = z.infer<typeof SnapshotFile>;
