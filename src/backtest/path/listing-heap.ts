/**
 * The path's open listings ordered by their next event time (`eventAt`): a binary min-heap, so a
 * listing event costs O(log n) instead of a scan of every open listing.
 */
import type { Listing } from './path-market.js';

export class ListingHeap {
  private readonly items: Listing[] = [];

  get size(): number {
    return this.items.length;
  }

  /** Every open listing, in heap order (for sums over all of them). */
  all(): readonly Listing[] {
    return this.items;
  }

  /** The earliest next event, Infinity when empty. */
  nextAt(): number {
    return this.items.length > 0 ? this.items[0]!.eventAt : Number.POSITIVE_INFINITY;
  }

  push(l: Listing): void {
    const a = this.items;
    a.push(l);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]!.eventAt <= l.eventAt) break;
      a[i] = a[parent]!;
      i = parent;
    }
    a[i] = l;
  }

  /** Removes and returns the listing with the earliest event (the heap must not be empty). */
  pop(): Listing {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= a.length) break;
        const right = left + 1;
        const child = right < a.length && a[right]!.eventAt < a[left]!.eventAt ? right : left;
        if (a[child]!.eventAt >= last.eventAt) break;
        a[i] = a[child]!;
        i = child;
      }
      a[i] = last;
    }
    return top;
  }
}
