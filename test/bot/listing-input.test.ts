import { describe, expect, it } from 'vitest';
import { listingInput } from '../../src/bot/selling/listing-input.js';
import type { ListingRow, PullRow } from '../../src/store/ledger.js';

const listing = { priceCents: 13_000, createdAt: 1_000, cardId: 'c1' } as ListingRow;
const pull = (over: Partial<PullRow>) =>
  ({ valueCents: 10_000, pulledAt: 0, origin: 'pack', pricePaidCents: null, ...over }) as PullRow;

describe('listingInput: the basis the sell-back offer is locked to', () => {
  it.each([
    ['a pull: its value at the pull', pull({}), 10_000],
    [
      'a card bought below its value: the price paid',
      pull({ origin: 'purchase', pricePaidCents: 8_000 }),
      8_000,
    ],
    [
      'a card bought above its value: its value at purchase',
      pull({ origin: 'purchase', pricePaidCents: 12_000 }),
      10_000,
    ],
  ])('%s', (_, p, basis) => {
    const input = listingInput(listing, p, { valueCents: 15_000, pulledAt: 0 });
    expect(input.view.basisValueCents).toBe(basis);
    expect(input.view.marketValueCents).toBe(15_000);
  });
});

describe('listingInput: when the price was set (the reprice band applies from there)', () => {
  it.each([
    ['never repriced: its listing', { repricedAt: null }, 1_000],
    ['repriced: the last reprice', { repricedAt: 5_000 }, 5_000],
  ])('%s', (_, over, pricedAt) => {
    const input = listingInput({ ...listing, ...over } as ListingRow, pull({}), undefined);
    expect(input.view.pricedAt).toBe(pricedAt);
    expect(input.view.listedAt).toBe(1_000);
  });
});
