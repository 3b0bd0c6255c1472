/**
 * Dry-run's paper market: a PartnerApi whose catalog reads go to the real API and whose writes go
 * to an in-process simulated Market seeded from what was read (the account, the pools and, when
 * the strategy buys cards, the shop stock of its card categories, as a snapshot world). The
 * account-scoped reads (account, vault) come from the paper account too, since they must show what
 * the paper orders did; so does the shop a strategy buys from, so a card bought on paper leaves
 * it. No write ever reaches the real service: the write methods below have no path to `real`.
 */
import { iterShopCards } from '../../api/paginate.js';
import type { PartnerApi } from '../../api/partner-api.js';
import type { Category } from '../../api/schemas.js';
import { type ShopStock, SNAPSHOT_FORMAT } from '../../api/snapshot-schema.js';
import { type Clock, iso } from '../../core/clock.js';
import { Market } from '../../market/market.js';
import { worldFromSnapshot } from '../../market/world.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import { SharedCatalog } from './catalog.js';
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
  const read = await readPools(new SharedCatalog(() => clock.now()), real, strategy);
  // Paper orders are charged what the real service charges: the pack list's price (spec).
  const pools = read.pools.map((p) => {
    const list = read.listPriceCents.get(`${p.category}/${p.pack_type}`);
    return list === undefined ? p : { ...p, price: list / 100 };
  });
  // The shop a card-buying strategy reads, each card at the real price and value: the paper market
  // sells it as the service does, and what the bot buys on paper leaves it.
  const paperShop = strategy.cards.enabled;
  const shop = paperShop ? await readShopStock(real, strategy.cards.categories) : null;
  const world = worldFromSnapshot(
    { format: SNAPSHOT_FORMAT, taken_at: iso(clock.now()), source: 'dry-run', account, pools, shop },
    {
      // Other buyers and sellers are not simulated: the paper market changes only by our own orders.
      dynamics: {
        others_pack_openings_per_hour: 0,
        others_shop_purchases_per_hour: 0,
        others_listings_per_category: 0,
      },
      shop: paperShop,
    },
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
    // The paper shop when the strategy buys cards (seeded from the real one at start), else real.
    listShopCards: (query) => (paperShop ? paper.listShopCards(query) : real.listShopCards(query)),
    getIdentity: () => real.getIdentity(),
    getPurchaseReport: (query) => real.getPurchaseReport(query),
  };
}

/** Every shop card of `categories` as the real API lists them (page after page). */
async function readShopStock(real: PartnerApi, categories: readonly string[]): Promise<ShopStock[]> {
  const out: ShopStock[] = [];
  for (const category of categories) {
    const cards = [];
    for await (const c of iterShopCards(real, { category: category as Category, per_page: 1000 }))
      cards.push(c);
    out.push({ category, total: cards.length, cards });
  }
  return out;
}
