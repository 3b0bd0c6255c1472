import { describe, expect, it } from 'vitest';
import { ListingHeap } from '../../src/backtest/path/listing-heap.js';
import type { Listing } from '../../src/backtest/path/path-market.js';
import { Rng } from '../../src/core/prng.js';

const listing = (eventAt: number): Listing =>
  ({
    eventAt,
    pool: 0,
    plan: 0,
    category: 'pokemon',
    pulledAt: 0,
    listedAt: 0,
    basisCents: 0,
    priceCents: 0,
    anchorIndex: 1,
    outcome: 'pending',
    fillBudget: 0,
    modelOrder: -1,
    amountCents: 0,
  }) as Listing;

describe('ListingHeap', () => {
  it('pops listings in event order under random pushes and re-pushes', () => {
    const rng = new Rng(4);
    const heap = new ListingHeap();
    const ref: number[] = [];
    let now = 0;
    for (let i = 0; i < 5000; i++) {
      if (heap.size > 0 && rng.next() < 0.45) {
        const l = heap.pop();
        ref.sort((a, b) => a - b);
        expect(l.eventAt).toBe(ref.shift());
        now = l.eventAt;
        if (rng.next() < 0.5) {
          l.eventAt = now + 1 + rng.int(100); // stepped, not done: back in with a later event
          heap.push(l);
          ref.push(l.eventAt);
        }
      } else {
        const at = now + rng.int(1000);
        heap.push(listing(at));
        ref.push(at);
      }
      expect(heap.size).toBe(ref.length);
      expect(heap.nextAt()).toBe(ref.length ? Math.min(...ref) : Number.POSITIVE_INFINITY);
    }
    expect(heap.all().length).toBe(ref.length);
  });
});
