/**
 * Async iterators over the paged endpoints. They page by incrementing `page` until `total` items
 * have been fetched, and stop early on an empty page (the set shrank between pages) rather than
 * spinning. Each yields items, not pages.
 */
import type { Clock } from '../core/clock.js';
import { RequestValidationError } from './errors.js';
import { ENDPOINTS, type PartnerApi } from './partner-api.js';
import { checkRequest } from './request-checks.js';
import type {
  PurchaseReportQuery,
  PurchaseReportRow,
  ShopCard,
  ShopCardsQuery,
  VaultEntry,
  VaultQuery,
} from './schemas.js';

interface PageResult<T> {
  page: number;
  per_page: number;
  total: number;
  items: readonly T[];
}

async function* pageThrough<T>(fetchPage: (page: number) => Promise<PageResult<T>>): AsyncGenerator<T> {
  let fetched = 0;
  for (let page = 1; ; page++) {
    const result = await fetchPage(page);
    for (const item of result.items) yield item;
    fetched += result.items.length;
    if (result.items.length === 0 || fetched >= result.total) return;
    // A page beyond the last one `total` allows would only repeat the empty-page guard's work.
    if (page >= Math.ceil(result.total / Math.max(1, result.per_page))) return;
  }
}

type PagedQuery<Q> = Omit<Q, 'page'>;

/** Every shop card of a category (`GET /catalog/cards`). */
export function iterShopCards(
  api: PartnerApi,
  query: PagedQuery<ShopCardsQuery> = {},
): AsyncGenerator<ShopCard> {
  checkRequest('listShopCards', query);
  return pageThrough(async (page) => {
    const r = await api.listShopCards({ ...query, page });
    return { ...r, items: r.cards };
  });
}

/** Every vault entry of a category (`GET /vault`). */
export function iterVault(api: PartnerApi, query: PagedQuery<VaultQuery> = {}): AsyncGenerator<VaultEntry> {
  checkRequest('getVault', query);
  return pageThrough(async (page) => {
    const r = await api.getVault({ ...query, page });
    return { ...r, items: r.cards };
  });
}

/**
 * Every row of a closed purchase-report window (`GET /pulls`). Only a closed window (both bounds
 * given, `until` not after now) pages consistently: with an open one the default `until` moves
 * between requests and rows shift across pages, so it is refused.
 */
export function iterPurchaseReport(
  api: PartnerApi,
  query: PagedQuery<PurchaseReportQuery>,
  clock: Clock,
): AsyncGenerator<PurchaseReportRow> {
  const endpoint = ENDPOINTS.getPurchaseReport;
  checkRequest('getPurchaseReport', query);
  const issues = [];
  if (!query.since)
    issues.push({ path: 'since', message: 'required: pages are only consistent over a closed window' });
  if (!query.until)
    issues.push({ path: 'until', message: 'required: pages are only consistent over a closed window' });
  else if (Date.parse(query.until) > clock.now())
    issues.push({ path: 'until', message: 'is in the future: the window is still open' });
  if (issues.length) throw new RequestValidationError(issues, endpoint);
  return pageThrough(async (page) => {
    const r = await api.getPurchaseReport({ ...query, page });
    return { ...r, items: r.pulls };
  });
}
