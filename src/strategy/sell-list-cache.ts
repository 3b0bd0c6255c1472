/**
 * A cache for what is computed from a strategy's `sell.list` alone (listing lives, listing
 * curves): by strategy object, then by the contents of `sell.list`. The optimiser's candidates are
 * many strategy objects that share a few listing settings (the example space: 15 over 100), so
 * each lattice is computed once per setting instead of once per candidate.
 */
import type { Strategy } from './strategy-schema.js';

/** Settings kept by contents; the oldest goes first (a search holds a few dozen at most). */
const MAX_SETTINGS = 64;

export class SellListCache<T> {
  private readonly byStrategy = new WeakMap<Strategy, T>();
  private readonly bySetting = new Map<string, T>();

  /** `build` is given a strategy holding only `sell.list`, so that it can read nothing else. */
  constructor(private readonly build: (listOnly: Strategy) => T) {}

  get(strategy: Strategy): T {
    let v = this.byStrategy.get(strategy);
    if (v !== undefined) return v;
    const key = JSON.stringify(strategy.sell.list);
    v = this.bySetting.get(key);
    if (v === undefined) {
      v = this.build({ sell: { list: strategy.sell.list } } as unknown as Strategy);
      this.bySetting.set(key, v);
      if (this.bySetting.size > MAX_SETTINGS) this.bySetting.delete(this.bySetting.keys().next().value!);
    }
    this.byStrategy.set(strategy, v);
    return v;
  }
}
