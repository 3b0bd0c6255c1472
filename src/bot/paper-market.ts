/**
 * Dry-run's paper market: a PartnerApi whose catalog reads go to the real API and whose writes go
 * to an in-process simulated Market seeded from what was read (the account and the pools, as a
 * snapshot world). The account-scoped reads (account, vault) come from the paper account too,
 * since they must show what the paper orders did. No write ever reaches the real service: the
 * write methods below have no path to `real`.
 */
import type { PartnerApi } from '../api/partner-api.js';
import { SNAPSHOT_FORMAT } from '../api/snapshot-schema.js';
import { type Clock, iso } from '../core/clock.js';
import { Market } from '../market/market.js';
import { worldFromSnapshot } from '../market/world.js';
import type { Strategy } from '../strategy/strategy-schema.js';
import { readPools } from './market-view.js';

/** The dev key every snapshot world carries (src/market/world.ts devKeys). */
const PAPER_KEY = 'sk_sim_full';

export interface PaperMarket extends PartnerApi {
  readonly market: Market;
}

export async function createPaperMarket(
  real: PartnerApi,
  strategy: Strategy,
  clock: Clock,
  options: { seed?: number } = {},
): Promise<PaperMarket> {
  const account = await real.getAccount();
  const read = await readPools(real, strategy);
  // Paper orders are charged what the real service charges: the pack list's price (spec).
  const pools = read.pools.map((p) => {
    const list = read.listPriceCents.get(`${p.category}/${p.pack_type}`);
    return list === undefined ? p : { ...p, price: list / 100 };
  });
  const world = worldFromSnapshot(
    { format: SNAPSHOT_FORMAT, taken_at: iso(clock.now()), source: 'dry-run', account, pools },
    // Other buyers are not simulated: the paper market changes only by our own paper orders.
    { dynamics: { others_pack_openings_per_hour: 0 } },
  );
  const market = new Market(world, { clock, seed: options.seed ?? 1 });
  const paper = market.api(PAPER_KEY);
  return {
    market,
    // writes: paper only
    purchasePacks: (body, key) => paper.purchasePacks(body, key),
    purchaseCard: (body, key) => paper.purchaseCard(body, key),
    sellBack: (items) => paper.sellBack(items),
    createListing: (body) => paper.createListing(body),
    deleteListing: (body) => paper.deleteListing(body),
    // the paper account's own state
    getAccount: () => paper.getAccount(),
    getVault: (query) => paper.getVault(query),
    // the real catalog
    listPacks: (query) => real.listPacks(query),
    getPackPool: (query) => real.getPackPool(query),
    listShopCards: (query) => real.listShopCards(query),
    getIdentity: () => real.getIdentity(),
    getPurchaseReport: (query) => real.getPurchaseReport(query),
  };
}
