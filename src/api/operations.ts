/**
 * The spec's twelve operations, one row each: method and path, the scope the key needs, whether it
 * acts on a linked account, whether it moves money, its retry class, and its request and response
 * schemas. The client, the simulator's router, scope check and mutation hooks, the retry policy and
 * the endpoint names all derive from this table: each path of the spec is written here and nowhere
 * else in src/.
 */
import type { z } from 'zod';
import {
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
  type Scope,
  SellBackRequest,
  SellBackResponse,
  ShopCardsPage,
  ShopCardsQuery,
  VaultPage,
  VaultQuery,
} from './schemas.js';

/**
 * How a failed call may be repeated (src/api/retry.ts): reads and sell-back (`already_sold`) are
 * safe to repeat; purchases only under their idempotency key; listings not once they may have run.
 */
export type RetryClass = 'read' | 'sellback' | 'purchase' | 'listing';

export interface OperationSpec {
  method: 'GET' | 'POST' | 'DELETE';
  /** Relative to `API_PREFIX`. */
  path: string;
  /** Scope the key needs (spec, Endpoints); null: any valid key. */
  scope: Scope | null;
  /** Acts on the key's user account: an unlinked key gets 403. */
  linked: boolean;
  /** Moves money or changes holdings (an order, a sell-back, a listing). */
  mutates: boolean;
  retry: RetryClass;
  /** Body (POST/DELETE) or query (GET) schema; undefined: no input. */
  request: z.ZodType | undefined;
  response: z.ZodType;
}

export const OPERATIONS = {
  purchasePacks: {
    method: 'POST',
    path: '/packs/purchase',
    scope: 'rip:packs',
    linked: true,
    mutates: true,
    retry: 'purchase',
    request: PackPurchaseRequest,
    response: PackPurchaseResponse,
  },
  purchaseCard: {
    method: 'POST',
    path: '/cards/purchase',
    scope: 'buy:cards',
    linked: true,
    mutates: true,
    retry: 'purchase',
    request: CardPurchaseRequest,
    response: CardPurchaseResponse,
  },
  sellBack: {
    method: 'POST',
    path: '/cards/sell-back',
    scope: 'sell:cards',
    linked: true,
    mutates: true,
    retry: 'sellback',
    request: SellBackRequest,
    response: SellBackResponse,
  },
  createListing: {
    method: 'POST',
    path: '/listings',
    scope: 'write:listings',
    linked: true,
    mutates: true,
    retry: 'listing',
    request: CreateListingRequest,
    response: Listing,
  },
  deleteListing: {
    method: 'DELETE',
    path: '/listings',
    scope: 'write:listings',
    linked: true,
    mutates: true,
    retry: 'listing',
    request: DeleteListingRequest,
    response: DelistResponse,
  },
  listPacks: {
    method: 'GET',
    path: '/catalog/packs',
    scope: 'read:catalog',
    linked: false,
    mutates: false,
    retry: 'read',
    request: PackListQuery,
    response: PackList,
  },
  getPackPool: {
    method: 'GET',
    path: '/catalog/packs/pool',
    scope: 'read:catalog',
    linked: false,
    mutates: false,
    retry: 'read',
    request: PackPoolQuery,
    response: PackPool,
  },
  listShopCards: {
    method: 'GET',
    path: '/catalog/cards',
    scope: 'read:catalog',
    linked: false,
    mutates: false,
    retry: 'read',
    request: ShopCardsQuery,
    response: ShopCardsPage,
  },
  getVault: {
    method: 'GET',
    path: '/vault',
    scope: 'read:account',
    linked: true,
    mutates: false,
    retry: 'read',
    request: VaultQuery,
    response: VaultPage,
  },
  getAccount: {
    method: 'GET',
    path: '/account',
    scope: 'read:account',
    linked: true,
    mutates: false,
    retry: 'read',
    request: undefined,
    response: Account,
  },
  getIdentity: {
    method: 'GET',
    path: '/me',
    scope: null,
    linked: false,
    mutates: false,
    retry: 'read',
    request: undefined,
    response: Identity,
  },
  getPurchaseReport: {
    method: 'GET',
    path: '/pulls',
    scope: 'read:pulls',
    linked: false,
    mutates: false,
    retry: 'read',
    request: PurchaseReportQuery,
    response: PurchaseReportPage,
  },
} as const satisfies Record<string, OperationSpec>;

export type Operation = keyof typeof OPERATIONS;

/** `METHOD /path` of an operation: its name in errors, logs and the `endpoint` metric label. */
export type Endpoint<O extends Operation> =
  `${(typeof OPERATIONS)[O]['method']} ${(typeof OPERATIONS)[O]['path']}`;

export const ENDPOINTS = Object.fromEntries(
  Object.entries(OPERATIONS).map(([op, o]) => [op, `${o.method} ${o.path}`]),
) as { readonly [O in Operation]: Endpoint<O> };

export const API_PREFIX = '/api/partner/v1';
