import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import {
  decideListing,
  keepRange,
  type ListingView,
  repriceSchedule,
} from '../../src/strategy/decide-listing.js';
import { strategy } from './helpers.js';

const T0 = Date.parse('2026-03-01T00:00:00Z');
// max_days 3, lock ends 7 days after acquisition (here: listing time), margin 60 min, reprice daily by 0.1.
const s = strategy({
  sell: { list: { markup: 1.5, max_days: 3, markup_step: 0.1, reprice_every_hours: 24, min_markup: 1.2 } },
});

const view = (over: Partial<ListingView> = {}): ListingView => ({
  priceCents: 15000,
  listedAt: T0,
  marketValueCents: 10000,
  basisValueCents: 10000,
  lockedValueUntil: T0 + 7 * DAY_MS,
  ...over,
});

describe('decideListing: deadlines against the value lock', () => {
  const flat = view({ priceCents: 13000 }); // markup reaches 1.3 after 2 steps; keeps until max_days
  it.each([
    ['market flat: keep 1 ms before max_days', view({ priceCents: 13000 }), T0 + 3 * DAY_MS - 1, 'keep'],
    ['market flat: delist at max_days', flat, T0 + 3 * DAY_MS, 'delist_and_sell_back'],
    [
      'market fell, lock ends before max_days: keep until margin before lock end',
      view({ marketValueCents: 9000, priceCents: 12600, lockedValueUntil: T0 + 2 * DAY_MS }),
      T0 + 2 * DAY_MS - 60 * MINUTE_MS - 1,
      'keep',
    ],
    [
      'market fell, lock ends before max_days: sell at margin before lock end',
      view({ marketValueCents: 9000, priceCents: 13500, lockedValueUntil: T0 + 2 * DAY_MS }),
      T0 + 2 * DAY_MS - 60 * MINUTE_MS,
      'delist_and_sell_back',
    ],
    [
      'market rose, lock ends after max_days: keep past max_days',
      view({ marketValueCents: 12000, priceCents: 14400, lockedValueUntil: T0 + 5 * DAY_MS }),
      T0 + 5 * DAY_MS - 1,
      'keep',
    ],
    [
      'market rose: still listed at the lock end itself (the offer is still the locked one)',
      view({ marketValueCents: 12000, priceCents: 14400, lockedValueUntil: T0 + 5 * DAY_MS }),
      T0 + 5 * DAY_MS + MINUTE_MS - 1,
      'keep',
    ],
    [
      'market rose: sell a minute after the lock has ended',
      view({ marketValueCents: 12000, priceCents: 14400, lockedValueUntil: T0 + 5 * DAY_MS }),
      T0 + 5 * DAY_MS + MINUTE_MS,
      'delist_and_sell_back',
    ],
    [
      'lock already over: plain max_days',
      view({ marketValueCents: 9000, priceCents: 11700, lockedValueUntil: T0 - 1 }),
      T0 + 3 * DAY_MS - 1,
      'keep',
    ],
  ] as const)('%s', (_n, listing, now, action) => {
    expect(decideListing(listing, s, now).action).toBe(action);
  });
});

describe('decideListing: repricing', () => {
  it.each([
    [
      'fresh listing at markup: keep until the first step',
      view(),
      T0 + HOUR_MS,
      { action: 'keep', until: T0 + DAY_MS },
    ],
    ['after one day: step down to 1.4', view(), T0 + DAY_MS, { action: 'reprice', priceCents: 14000 }],
    ['just before one day: keep', view(), T0 + DAY_MS - 1, { action: 'keep' }],
    [
      'market fell under half the price: reprice to the cap rule',
      view({ priceCents: 15000, marketValueCents: 7000, basisValueCents: 7000 }),
      T0 + HOUR_MS,
      { action: 'reprice', priceCents: 10500 },
    ],
    [
      'ignores moves under 1%',
      view({ priceCents: 15000, marketValueCents: 10050 }),
      T0 + HOUR_MS,
      { action: 'keep' },
    ],
  ] as const)('%s', (_n, listing, now, expected) => {
    expect(decideListing(listing, s, now)).toMatchObject(expected);
  });

  it('never steps below min_markup', () => {
    const steep = strategy({ sell: { list: { markup: 1.5, markup_step: 0.2, min_markup: 1.2 } } });
    expect(decideListing(view({ priceCents: 12000 }), steep, T0 + 2.9 * DAY_MS)).toMatchObject({
      action: 'keep',
    });
    expect(decideListing(view({ priceCents: 15000 }), steep, T0 + 2.9 * DAY_MS)).toMatchObject({
      action: 'reprice',
      priceCents: 12000,
    });
  });

  it('delists when the card is no longer worth listing', () => {
    const cheap = view({ priceCents: 150, marketValueCents: 50, basisValueCents: 50 });
    expect(decideListing(cheap, s, T0 + HOUR_MS)).toMatchObject({ action: 'delist_and_sell_back' });
  });
});

describe('keepRange: where decideListing keeps a listing until the same time', () => {
  const strategies = [
    s,
    strategy({ sell: { list: { markup: 1.3, max_days: 3, markup_step: 0.1, min_markup: 1.1 } } }),
    strategy({
      sell: {
        list: { markup: 1.8, max_days: 5, markup_step: 0.15, min_markup: 1.2, reprice_every_hours: 6 },
      },
    }),
    strategy({
      sell: { list: { markup: 2, max_days: 10, markup_step: 0, min_markup: 2, min_price_usd: 5 } },
    }),
  ];
  const rng = new Rng(17);
  const cases = Array.from({ length: 3000 }, () => {
    const st = strategies[rng.int(strategies.length)]!;
    const value = 50 + rng.int(rng.next() < 0.5 ? 2000 : 200_000);
    // At the value, within the 1% its price holds in (ranges may span it), or anywhere near.
    const near = rng.next();
    const basis =
      near < 0.2
        ? value
        : near < 0.5
          ? Math.max(1, value + Math.round(value * 0.01 * (2 * rng.next() - 1)))
          : Math.max(1, Math.round(value * (0.8 + 0.4 * rng.next())));
    const listedAt = T0 - rng.int(6 * DAY_MS);
    const now = T0;
    const markup =
      st.sell.list.markup -
      Math.floor((now - listedAt) / (st.sell.list.reprice_every_hours * HOUR_MS)) * st.sell.list.markup_step;
    // Mostly prices the strategy would keep, some it would not.
    const price = Math.max(
      1,
      Math.round(value * Math.max(markup, st.sell.list.min_markup) * (0.985 + 0.03 * rng.next())),
    );
    // Locks ending anywhere, or soon (where the sides' deadlines differ before the next step).
    const lock = rng.next();
    const lockedValueUntil =
      lock < 0.5 ? listedAt + rng.int(9 * DAY_MS) : lock < 0.8 ? now + rng.int(2 * DAY_MS) : null;
    const listing: ListingView = {
      priceCents: price,
      listedAt,
      marketValueCents: value,
      basisValueCents: basis,
      lockedValueUntil,
    };
    return { st, listing, now };
  });

  it('holds exactly where decideListing keeps the listing, at any time before its until', () => {
    let kept = 0;
    let wide = 0;
    let across = 0;
    let settled = 0;
    for (const { st, listing, now } of cases) {
      const d = decideListing(listing, st, now);
      const r = { lo: 0, hi: 0, until: 0 };
      const holds = keepRange(listing, st, now, r);
      expect(holds).toBe(d.action === 'keep');
      if (d.action !== 'keep') continue;
      kept++;
      const { lo, hi, until } = r;
      // decideListing's own until, or a later one when the steps between change nothing.
      if (until !== d.until) {
        expect(until).toBeGreaterThan(d.until);
        settled++;
      }
      expect(lo).toBeLessThanOrEqual(listing.marketValueCents);
      expect(hi).toBeGreaterThanOrEqual(listing.marketValueCents);
      if (hi > lo + 2) wide++;
      const locked = listing.lockedValueUntil !== null && now < listing.lockedValueUntil;
      if (locked && lo < listing.basisValueCents && hi > listing.basisValueCents) across++;
      const at = (v: number, t: number) => decideListing({ ...listing, marketValueCents: v }, st, t);
      const b = listing.basisValueCents;
      const inside = [lo, hi, lo + 1, hi - 1, Math.floor((lo + hi) / 2), b - 1, b, b + 1].filter(
        (v) => v >= lo && v <= hi,
      );
      for (const v of inside)
        for (const t of [now, now + Math.floor(rng.next() * (until - now)), until - 1])
          expect(at(v, t), `value ${v} at +${t - now} ms`).toMatchObject({ action: 'keep' });
      // Just outside, the answer differs: not kept, or kept until another time (the range is exact).
      for (const v of [lo - 1, hi + 1]) {
        if (v < 0) continue;
        const o = { lo: 0, hi: 0, until: 0 };
        const keptThere = keepRange({ ...listing, marketValueCents: v }, st, now, o);
        expect(keptThere && o.until === until, `value ${v} outside [${lo}, ${hi}]`).toBe(false);
        expect(keptThere, `value ${v}: keepRange and decideListing agree`).toBe(at(v, now).action === 'keep');
      }
    }
    // The table exercises both answers and ranges wider than a few cents.
    expect(kept).toBeGreaterThan(500);
    expect(wide).toBeGreaterThan(300);
    // Ranges that span the locked basis (both sides give the same until) are exercised too.
    expect(across).toBeGreaterThan(100);
    // And markups settled at their floor, kept past the steps that change nothing.
    expect(settled).toBeGreaterThan(100);
  });
});

describe('repriceSchedule: the steps decideListing will take', () => {
  it('lists each markup step ahead until the floor or the deadline, as decideListing reprices', () => {
    const listing = view({ priceCents: 15000 });
    const steps = repriceSchedule(listing, s, T0 + HOUR_MS);
    // 1.5 → 1.4 → 1.3 (then the 3-day deadline comes before the floor 1.2 would).
    expect(steps.map((x) => [x.at - T0, Math.round(x.markup * 100) / 100])).toEqual([
      [DAY_MS, 1.4],
      [2 * DAY_MS, 1.3],
    ]);
    let price = listing.priceCents;
    for (const step of steps) {
      const d = decideListing({ ...listing, priceCents: price }, s, step.at);
      expect(d).toEqual({ action: 'reprice', priceCents: step.priceCents, reason: expect.any(String) });
      price = step.priceCents!;
    }
    // Steps already taken are not listed; none past the deadline.
    expect(repriceSchedule(listing, s, T0 + DAY_MS + 1).map((x) => x.at - T0)).toEqual([2 * DAY_MS]);
    expect(repriceSchedule(listing, s, T0 + 3 * DAY_MS)).toEqual([]);
  });
});
