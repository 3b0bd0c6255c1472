import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type HttpPartnerApi } from '../../src/api/client.js';
import { RequestValidationError } from '../../src/api/errors.js';
import { iterPurchaseReport, iterShopCards, iterVault } from '../../src/api/paginate.js';
import { VirtualClock } from '../../src/core/clock.js';
import * as F from './fixtures.js';

let api: HttpPartnerApi;
const clock = new VirtualClock('2026-02-01T00:00:00Z');
const path = (p: string) => `${F.PREFIX}${p}`;

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

beforeAll(() => nock.disableNetConnect());
afterEach(async () => {
  nock.cleanAll();
  await api?.destroy();
});
afterAll(() => nock.enableNetConnect());

function client() {
  api = createHttpClient({
    baseUrl: F.BASE,
    apiKey: F.KEY,
    clock,
    pacing: { readBudget: false },
    retry: { maxAttempts: 1 },
  });
  return api;
}

describe('iterShopCards', () => {
  it('pages by incrementing page until total cards are fetched', async () => {
    const c = client();
    nock(F.BASE)
      .get(path('/catalog/cards'))
      .query({ category: 'sports', per_page: '2', page: '1' })
      .reply(200, F.shopPage(1, 2, 5, ['a', 'b']))
      .get(path('/catalog/cards'))
      .query({ category: 'sports', per_page: '2', page: '2' })
      .reply(200, F.shopPage(2, 2, 5, ['c', 'd']))
      .get(path('/catalog/cards'))
      .query({ category: 'sports', per_page: '2', page: '3' })
      .reply(200, F.shopPage(3, 2, 5, ['e']));
    const cards = await collect(iterShopCards(c, { category: 'sports', per_page: 2 }));
    expect(cards.map((x) => x.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(nock.isDone()).toBe(true);
  });

  it('stops safely on an empty page before total (the set shrank)', async () => {
    const c = client();
    nock(F.BASE)
      .get(path('/catalog/cards'))
      .query({ per_page: '2', page: '1' })
      .reply(200, F.shopPage(1, 2, 6, ['a', 'b']))
      .get(path('/catalog/cards'))
      .query({ per_page: '2', page: '2' })
      .reply(200, F.shopPage(2, 2, 6, []));
    const cards = await collect(iterShopCards(c, { per_page: 2 }));
    expect(cards.map((x) => x.id)).toEqual(['a', 'b']);
    expect(nock.isDone()).toBe(true);
  });

  it('stops at the last page total allows even if pages come back short', async () => {
    const c = client();
    nock(F.BASE)
      .get(path('/catalog/cards'))
      .query({ per_page: '2', page: '1' })
      .reply(200, F.shopPage(1, 2, 4, ['a']))
      .get(path('/catalog/cards'))
      .query({ per_page: '2', page: '2' })
      .reply(200, F.shopPage(2, 2, 4, ['b']));
    const cards = await collect(iterShopCards(c, { per_page: 2 }));
    expect(cards.map((x) => x.id)).toEqual(['a', 'b']);
    expect(nock.isDone()).toBe(true);
  });

  it('refuses a bad page size before any request', () => {
    const c = client();
    expect(() => iterShopCards(c, { per_page: 1001 })).toThrow(RequestValidationError);
  });
});

describe('iterVault', () => {
  it('pages to total', async () => {
    const c = client();
    nock(F.BASE)
      .get(path('/vault'))
      .query({ per_page: '200', page: '1' })
      .reply(200, F.vaultPage(1, 2, 3, ['v1', 'v2']))
      .get(path('/vault'))
      .query({ per_page: '200', page: '2' })
      .reply(200, F.vaultPage(2, 2, 3, ['v3']));
    // The server caps per_page below what was asked; paging still reaches total.
    const entries = await collect(iterVault(c, { per_page: 200 }));
    expect(entries.map((x) => x.card_id)).toEqual(['v1', 'v2', 'v3']);
  });
});

describe('iterPurchaseReport', () => {
  const window = { since: '2025-12-01T00:00:00Z', until: '2025-12-31T00:00:00Z' };

  it('pages a closed window to total, sending the same bounds on every page', async () => {
    const c = client();
    nock(F.BASE)
      .get(path('/pulls'))
      .query({ ...window, per_page: '2', page: '1' })
      .reply(200, F.reportPage(1, 2, 3, [1, 2]))
      .get(path('/pulls'))
      .query({ ...window, per_page: '2', page: '2' })
      .reply(200, F.reportPage(2, 2, 3, [3]));
    const rows = await collect(iterPurchaseReport(c, { ...window, per_page: 2 }, clock));
    expect(rows.map((r) => r.user_id)).toEqual(['u-1', 'u-2', 'u-3']);
  });

  it.each([
    ['no since', { until: window.until }, /since: required/],
    ['no until', { since: window.since }, /until: required/],
    [
      'until in the future',
      { since: '2026-01-20T00:00:00Z', until: '2026-02-02T00:00:00Z' },
      /until: is in the future/,
    ],
    ['inverted', { since: window.until, until: window.since }, /inverted/],
    ['over 31 days', { since: '2025-10-01T00:00:00Z', until: '2025-12-31T00:00:00Z' }, /31 days/],
  ])('refuses an open or bad window: %s', (_l, q, re) => {
    const c = client();
    expect(() => iterPurchaseReport(c, q, clock)).toThrow(re);
  });
});
