import { describe, expect, it } from 'vitest';
import { listingCurve } from '../../src/strategy/listing-curve.js';
import { listingLife } from '../../src/strategy/listing-life.js';
import { SellListCache } from '../../src/strategy/sell-list-cache.js';
import type { Strategy } from '../../src/strategy/strategy-schema.js';
import { strategy } from '../strategy-builder.js';

describe('SellListCache', () => {
  it('builds once per listing setting, from a strategy holding only sell.list', () => {
    const seen: Strategy[] = [];
    const cache = new SellListCache((s) => {
      seen.push(s);
      return { markup: s.sell.list.markup };
    });
    const a = strategy({ open: { min_ev_ratio: 1.2 }, sell: { list: { markup: 1.4 } } });
    const b = strategy({ open: { min_ev_ratio: 0.9 }, sell: { list: { markup: 1.4 } } });
    const c = strategy({ sell: { list: { markup: 1.6 } } });
    expect(cache.get(a)).toBe(cache.get(b));
    expect(cache.get(c)).not.toBe(cache.get(a));
    expect(cache.get(c)).toEqual({ markup: 1.6 });
    expect(seen).toHaveLength(2);
    // What the builder is given: nothing but the listing setting.
    expect(Object.keys(seen[0]!)).toEqual(['sell']);
    expect(Object.keys(seen[0]!.sell)).toEqual(['list']);
    expect(seen[0]!.sell.list).toBe(a.sell.list);
  });

  it('shares listing lives and curves between strategies that list alike', () => {
    const a = strategy({ open: { min_ev_ratio: 1.3 }, sell: { threshold_usd: 5, list: { max_days: 4 } } });
    const b = strategy({ open: { min_ev_ratio: 0.7 }, sell: { threshold_usd: 50, list: { max_days: 4 } } });
    const other = strategy({ sell: { list: { max_days: 5 } } });
    expect(listingLife(a)).toBe(listingLife(b));
    expect(listingLife(a, 0.5)).toEqual(listingLife(b, 0.5));
    expect(listingCurve(a)).toBe(listingCurve(b));
    expect(listingLife(other).meanDays).not.toBe(listingLife(a).meanDays);
  });
});
