/**
 * The one seam the bot and the commands that read a service talk to. The HTTP client, the
 * in-process simulated market and the dry-run paper market implement it, so live, dry-run and
 * embedded modes share one code path. (A backtest does not use it: its paths replay the strategy's
 * decisions against src/backtest/path/path-market.ts; only recording a snapshot reads through it.)
 * Objects are the validated wire shapes of `schemas.ts` (USD numbers); failures are the typed
 * errors of `errors.ts`.
 */

import type { OPERATIONS } from './operations.js';
import type {
  Account,
  CardPurchaseRequest,
  CardPurchaseResponse,
  CreateListingRequest,
  DeleteListingRequest,
  DelistResponse,
  Identity,
  Listing,
  PackList,
  PackListQuery,
  PackPool,
  PackPoolQuery,
  PackPurchaseRequest,
  PackPurchaseResponse,
  PurchaseReportPage,
  PurchaseReportQuery,
  SellBackItem,
  SellBackResponse,
  ShopCardsPage,
  ShopCardsQuery,
  VaultPage,
  VaultQuery,
} from './schemas.js';

export interface PartnerApi {
  /** `POST /packs/purchase`. The key must be persisted with the exact body before calling. */
  purchasePacks(body: PackPurchaseRequest, idempotencyKey: string): Promise<PackPurchaseResponse>;
  /** `POST /cards/purchase`. */
  purchaseCard(body: CardPurchaseRequest, idempotencyKey: string): Promise<CardPurchaseResponse>;
  /** `POST /cards/sell-back`, 1 to 10 items. Per-item failures are results, not errors. */
  sellBack(items: SellBackItem[]): Promise<SellBackResponse>;
  /** `POST /listings`. */
  createListing(body: CreateListingRequest): Promise<Listing>;
  /** `DELETE /listings`. */
  deleteListing(body: DeleteListingRequest): Promise<DelistResponse>;
  /** `GET /catalog/packs`. */
  listPacks(query?: PackListQuery): Promise<PackList>;
  /** `GET /catalog/packs/pool`. */
  getPackPool(query: PackPoolQuery): Promise<PackPool>;
  /** `GET /catalog/cards`, one page. */
  listShopCards(query?: ShopCardsQuery): Promise<ShopCardsPage>;
  /** `GET /vault`, one page. */
  getVault(query?: VaultQuery): Promise<VaultPage>;
  /** `GET /account`. */
  getAccount(): Promise<Account>;
  /** `GET /me`. */
  getIdentity(): Promise<Identity>;
  /** `GET /pulls`, one page. */
  getPurchaseReport(query?: PurchaseReportQuery): Promise<PurchaseReportPage>;
}

// The operations table (src/api/operations.ts) names every method of this interface, and only those.
export { API_PREFIX, ENDPOINTS, type Operation } from './operations.js';

type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never]
  ? true
  : never;
const _operationsCoverTheInterface: SameKeys<PartnerApi, typeof OPERATIONS> = true;
void _operationsCoverTheInterface;
