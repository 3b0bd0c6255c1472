/**
 * Where worlds come from: a `packbot.world/v1` file (default `config/sim.yaml`), or a recorded
 * snapshot (pools exactly as the API returned them become the inventory; on request, its shop
 * stock too).
 */
import { RISK_LEVELS, type RiskLevel, SCOPES } from '../api/schemas.js';
import type { SnapshotFile } from '../api/snapshot-schema.js';
import { deepFreeze } from '../core/freeze.js';
import { WORLD_FORMAT, type World, WorldFile, type WorldInput } from './world-schema.js';

/** Parses an in-memory world description (tests, snapshots); throws ZodError on invalid input. */
export function parseWorld(input: WorldInput): World {
  return deepFreeze(WorldFile.parse(input));
}

/** The four dev keys of DESIGN.md, bound to `accountId`. */
export function devKeys(accountId: string): WorldInput['keys'] {
  return [
    { name: 'sim-full', key: 'sk_sim_full', scopes: [...SCOPES], account: accountId },
    { name: 'sim-read', key: 'sk_sim_read', scopes: ['read:catalog', 'read:account'], account: accountId },
    { name: 'sim-unlinked', key: 'sk_sim_unlinked', scopes: ['read:catalog', 'read:account'], account: null },
    { name: 'sim-disabled', key: 'sk_sim_disabled', scopes: [...SCOPES], account: accountId, disabled: true },
  ];
}

export interface SnapshotWorldOptions {
  /** Generate a band's unseen cards (hittable_cards > listed) within its bounds. Default true. */
  fillUnseen?: boolean;
  /** Starting balance in USD; default: the snapshot's account balance, else 10000. */
  balance?: number;
  /** Dynamics overrides (e.g. `{ others_pack_openings_per_hour: 0 }` for a frozen market). */
  dynamics?: WorldInput['dynamics'];
  rules?: WorldInput['rules'];
  /**
   * Stock the shop with the snapshot's recorded shop (v2 `shop`), each card at its own recorded
   * price and value (prices need not fit one markup). Default false: pools only.
   */
  shop?: boolean;
}

type BandInput = NonNullable<WorldInput['categories']>['pokemon'] extends infer C
  ? C extends { packs?: (infer P)[] }
    ? P extends { bands: (infer B)[] }
      ? B
      : never
    : never
  : never;
type PackInput = NonNullable<NonNullable<WorldInput['categories']>['pokemon']>['packs'] extends
  | (infer P)[]
  | undefined
  ? P
  : never;

export function worldFromSnapshot(snapshot: SnapshotFile, opts: SnapshotWorldOptions = {}): World {
  const fillUnseen = opts.fillUnseen ?? true;
  const packs = new Map<string, { category: string; pools: SnapshotFile['pools'] }>();
  for (const pool of snapshot.pools) {
    const k = `${pool.category}\u0000${pool.pack_type}`;
    const entry = packs.get(k) ?? { category: pool.category, pools: [] };
    entry.pools.push(pool);
    packs.set(k, entry);
  }
  const categories: Record<string, { packs: PackInput[] }> = {};
  for (const { category, pools } of packs.values()) {
    const first = pools[0]!;
    const bands = new Map<string, BandInput & { odds: Partial<Record<RiskLevel, number>> }>();
    const seenCards = new Map<string, Set<string>>();
    const hittable = new Map<string, number>();
    for (const pool of pools) {
      for (const b of pool.bands) {
        const band = bands.get(b.bucket_id) ?? {
          bucket_id: b.bucket_id,
          label: b.label,
          min_value: b.min_value,
          max_value: b.max_value,
          is_consolation: b.is_consolation,
          odds: {},
          cards: [],
        };
        band.odds[pool.risk_level] = b.odds;
        bands.set(b.bucket_id, band);
        hittable.set(b.bucket_id, Math.max(hittable.get(b.bucket_id) ?? 0, b.hittable_cards));
      }
      for (const c of pool.cards) {
        const band = bands.get(c.bucket_id);
        if (!band) continue;
        const seen = seenCards.get(c.bucket_id) ?? new Set<string>();
        seenCards.set(c.bucket_id, seen);
        if (seen.has(c.id)) continue;
        seen.add(c.id);
        // Recorded values win over recorded bounds: widen the band rather than drop a card.
        band.min_value = Math.min(band.min_value, c.market_value);
        band.max_value = Math.max(band.max_value, c.market_value);
        band.cards!.push({
          id: c.id,
          name: c.name,
          ...(c.set ? { set: c.set } : {}),
          value: c.market_value,
          ...(c.grading_company ? { grading_company: c.grading_company } : {}),
          ...(typeof c.grading_rank === 'number' ? { grading_rank: c.grading_rank } : {}),
          ...(c.cert_number ? { cert_number: c.cert_number } : {}),
          ...(c.image_url ? { image_url: c.image_url } : {}),
        });
      }
    }
    for (const band of bands.values()) {
      const unseen = (hittable.get(band.bucket_id) ?? 0) - (band.cards?.length ?? 0);
      if (fillUnseen && unseen > 0) band.generate = { count: unseen, distribution: 'uniform' };
    }
    const chase = pools.find((p) => p.chase)?.chase ?? null;
    const pack: PackInput = {
      pack_type: first.pack_type,
      name: first.name,
      price: first.price,
      available: first.available,
      ...(first.available ? {} : { reason: 'unavailable when the snapshot was taken' }),
      risk_levels: RISK_LEVELS.filter((r) => pools.some((p) => p.risk_level === r)),
      bands: [...bands.values()],
      chase: chase
        ? {
            card: { id: chase.card.id, name: chase.card.name, value: chase.card.market_value },
            probability: chase.probability,
            label: chase.label,
            odds_label: chase.odds_label,
            ends_at: chase.ends_at,
          }
        : null,
    };
    categories[category] ??= { packs: [] };
    categories[category].packs.push(pack);
  }
  const shops = opts.shop ? (snapshot.shop ?? []) : [];
  for (const stock of shops) {
    categories[stock.category] ??= { packs: [] };
    const cat = categories[stock.category] as { packs: PackInput[]; shop?: unknown };
    cat.shop = {
      cards: stock.cards.map((c) => ({
        id: c.id,
        name: c.name,
        ...(c.set ? { set: c.set } : {}),
        value: c.market_value,
        price: c.price,
        ...(c.grading_company ? { grading_company: c.grading_company } : {}),
        ...(typeof c.grading_rank === 'number' ? { grading_rank: c.grading_rank } : {}),
        ...(c.cert_number ? { cert_number: c.cert_number } : {}),
        ...(c.image_url ? { image_url: c.image_url } : {}),
      })),
    };
  }
  const balance = opts.balance ?? snapshot.account?.balance ?? 10000;
  const limits = snapshot.account?.limits;
  const input: WorldInput = {
    format: WORLD_FORMAT,
    name: `snapshot ${snapshot.taken_at}`,
    accounts: [{ id: 'acct_snapshot', username: snapshot.account?.username ?? 'snapshot', balance }],
    keys: devKeys('acct_snapshot'),
    categories: categories as WorldInput['categories'],
    ...(opts.dynamics ? { dynamics: opts.dynamics } : {}),
    rules: {
      ...(limits
        ? {
            max_packs_per_day: limits.max_packs_per_day,
            min_seconds_between_purchases: limits.min_seconds_between_purchases,
          }
        : {}),
      ...opts.rules,
    },
  };
  return parseWorld(input);
}
