/**
 * A static path's open listings in typed arrays (static-path.ts): per listing its pool, plan,
 * listing time, what its end pays, whether it sold, and its order's slot in the path model;
 * ordered by their end in a binary min-heap of listing numbers that makes exactly the moves of
 * `ListingHeap` (listing-heap.ts), so listings ending at the same instant end in the same order
 * as the general loop's (the drawdown and the model's sums see them in that order). Numbers of
 * ended listings are reused; the arrays grow as needed and serve every path of an engine.
 */
export class StaticListings {
  private capacity = 64;
  pool = new Int32Array(this.capacity);
  plan = new Int32Array(this.capacity);
  listedAt = new Float64Array(this.capacity);
  amount = new Float64Array(this.capacity);
  /** 1: the listing sells; 0: it is delisted and sold back. */
  sold = new Uint8Array(this.capacity);
  /** The path model's slot of the order it came from (-1: none). */
  slot = new Int32Array(this.capacity);
  private heap = new Int32Array(this.capacity);
  /** The end of each heap entry, by heap position. */
  private key = new Float64Array(this.capacity);
  size = 0;
  /** Listing numbers never used yet start at `used`; ended ones wait in `spare`. */
  private used = 0;
  private spare = new Int32Array(this.capacity);
  private spareCount = 0;
  /** The current order's listings, for their slot once the order is booked. */
  recent = new Int32Array(16);
  recentCount = 0;

  /** A new path: no listing. */
  clear(): void {
    this.size = 0;
    this.used = 0;
    this.spareCount = 0;
    this.recentCount = 0;
  }

  /** The earliest end, Infinity when none. */
  nextAt(): number {
    return this.size > 0 ? this.key[0]! : Number.POSITIVE_INFINITY;
  }

  /** Listing number of the h-th entry in heap order (sums over all of them go in this order). */
  at(h: number): number {
    return this.heap[h]!;
  }

  /** Σ of `sellBack[plan]` over the open listings in heap order, added to `base` (equity's marks). */
  holdings(base: number, sellBack: Float64Array): number {
    let h = base;
    for (let k = 0; k < this.size; k++) h += sellBack[this.plan[this.heap[k]!]!]!;
    return h;
  }

  startOrder(): void {
    this.recentCount = 0;
  }

  /** The current order's listings belong to the model's order `slot`. */
  endOrder(slot: number): void {
    for (let k = 0; k < this.recentCount; k++) this.slot[this.recent[k]!] = slot;
    this.recentCount = 0;
  }

  add(pool: number, plan: number, at: number, endAt: number, amount: number, sold: number): void {
    let l: number;
    if (this.spareCount > 0) l = this.spare[--this.spareCount]!;
    else {
      if (this.used === this.capacity) this.grow();
      l = this.used++;
    }
    this.pool[l] = pool;
    this.plan[l] = plan;
    this.listedAt[l] = at;
    this.amount[l] = amount;
    this.sold[l] = sold;
    this.slot[l] = -1;
    if (this.recentCount === this.recent.length) {
      const r = new Int32Array(2 * this.recent.length);
      r.set(this.recent);
      this.recent = r;
    }
    this.recent[this.recentCount++] = l;
    // ListingHeap.push: sift up while the parent ends strictly later. Each entry's end sits
    // beside it in `key` (the same comparisons without a look-up through the listing number).
    const a = this.heap;
    const key = this.key;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (key[parent]! <= endAt) break;
      a[i] = a[parent]!;
      key[i] = key[parent]!;
      i = parent;
    }
    a[i] = l;
    key[i] = endAt;
  }

  /** Removes the listing that ends first and returns its number (the heap must not be empty). */
  pop(): number {
    // ListingHeap.pop: the last entry sifted down from the root.
    const a = this.heap;
    const key = this.key;
    const top = a[0]!;
    const n = --this.size;
    if (n > 0) {
      const last = a[n]!;
      const lastEnd = key[n]!;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        const child = right < n && key[right]! < key[left]! ? right : left;
        if (key[child]! >= lastEnd) break;
        a[i] = a[child]!;
        key[i] = key[child]!;
        i = child;
      }
      a[i] = last;
      key[i] = lastEnd;
    }
    return top;
  }

  /** Listing `l` ended: its number serves a later listing. */
  free(l: number): void {
    this.spare[this.spareCount++] = l;
  }

  private grow(): void {
    const n = 2 * this.capacity;
    const i32 = (x: Int32Array) => {
      const y = new Int32Array(n);
      y.set(x);
      return y;
    };
    const f64 = (x: Float64Array) => {
      const y = new Float64Array(n);
      y.set(x);
      return y;
    };
    this.pool = i32(this.pool);
    this.plan = i32(this.plan);
    this.listedAt = f64(this.listedAt);
    this.amount = f64(this.amount);
    const sold = new Uint8Array(n);
    sold.set(this.sold);
    this.sold = sold;
    this.slot = i32(this.slot);
    this.heap = i32(this.heap);
    this.key = f64(this.key);
    this.spare = i32(this.spare);
    this.capacity = n;
  }
}
