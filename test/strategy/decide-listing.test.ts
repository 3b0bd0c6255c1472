import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import {
  decideListing,
  keepRange,
  type ListingView,
  markupAfter,
  repriceSchedule,
} from '../../src/strategy/decide-listing.js';
import { strategy } from '../strategy-builder.js';

const T0 = Date.parse('2026-03-01T00:00:00Z');
// max_days 3, lock ends 7 days after acquisition (here: listing time), margin 60 min, reprice daily by 0.1.
const s = strategy({
  sell: { list: { markup: 1.5, max_days: 3, markup_step: 0.1, reprice_every_hours: 24, min_markup: 1.2 } },
});

const view = (over: Partial<ListingView> = {}): ListingView => ({
  priceCents: 15000,
  listedAt: T0,
  pricedAt: T0,
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
  ] as const)('%s', (_n, listing, now, expected) => {
    expect(decideListing(listing, s, now)).toMatchObject(expected);
  });

  // Listed at 1.5 × 100.00; the default band is 5% of the price (750 cents).
  it.each([
    ['value up 1%: target 151.50, inside the band', { marketValueCents: 10100 }, T0 + HOUR_MS, 'keep', 15000],
    [
      'value up 5%: target 157.50, on the band edge',
      { marketValueCents: 10500 },
      T0 + HOUR_MS,
      'keep',
      15000,
    ],
    ['value up 5.01%: past the band', { marketValueCents: 10501 }, T0 + HOUR_MS, 'reprice', 15752],
    [
      'value down 4%: target 144.00, inside the band',
      { marketValueCents: 9600 },
      T0 + HOUR_MS,
      'keep',
      15000,
    ],
    ['value down 6%: past the band', { marketValueCents: 9400 }, T0 + HOUR_MS, 'reprice', 14100],
    // After the first step (markup 1.4), a listing priced before it is repriced however small
    // the move: the step-down schedule still applies inside the band.
    ['a step taken since: reprice to 1.4', {}, T0 + DAY_MS, 'reprice', 14000],
    [
      'a step taken since, value up 3%: reprice to 1.4',
      { marketValueCents: 10300 },
      T0 + DAY_MS,
      'reprice',
      14420,
    ],
    // Repriced after that step: the band applies again.
    [
      'repriced at the step, value up 3% since',
      { priceCents: 14000, pricedAt: T0 + DAY_MS, marketValueCents: 10300 },
      T0 + DAY_MS + HOUR_MS,
      'keep',
      14000,
    ],
    [
      'repriced at the step, value down 6% since',
      { priceCents: 14000, pricedAt: T0 + DAY_MS, marketValueCents: 9400 },
      T0 + DAY_MS + HOUR_MS,
      'reprice',
      13160,
    ],
    // At the floor no step lowers the markup any more: the band alone decides.
    [
      'at the floor, priced steps ago, value up 2%',
      {
        priceCents: 12000,
        pricedAt: T0 + 3 * DAY_MS,
        marketValueCents: 10200,
        lockedValueUntil: T0 + 20 * DAY_MS,
      },
      T0 + 5 * DAY_MS,
      'keep',
      12000,
    ],
  ] as const)('band: %s', (_n, over, now, action, price) => {
    const long = strategy({
      sell: {
        list: { markup: 1.5, max_days: 9, markup_step: 0.1, reprice_every_hours: 24, min_markup: 1.2 },
      },
    });
    const d = decideListing(view(over), long, now);
    expect(d.action).toBe(action);
    if (d.action === 'reprice') expect(d.priceCents).toBe(price);
  });

  it.each([
    [0, 10001, 'reprice'],
    [0.01, 10100, 'keep'],
    [0.01, 10101, 'reprice'],
    [0.2, 12000, 'keep'],
  ] as const)('band %s: value %s → %s', (band, value, action) => {
    const b = strategy({ sell: { list: { markup: 1.5, max_days: 3, reprice_band: band } } });
    expect(decideListing(view({ marketValueCents: value }), b, T0 + HOUR_MS).action).toBe(action);
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
    strategy({
      sell: { list: { markup: 1.3, max_days: 3, markup_step: 0.1, min_markup: 1.1, reprice_band: 0 } },
    }),
    strategy({
      sell: { list: { markup: 1.6, max_days: 4, markup_step: 0.05, min_markup: 1.1, reprice_band: 0.15 } },
    }),
  ];
  const rng = new Rng(17);
  const cases = Array.from({ length: 3000 }, () => {
    const st = strategies[rng.int(strategies.length)]!;
    const value = 50 + rng.int(rng.next() < 0.5 ? 2000 : 200_000);
    // At the value, within the 1% around it (ranges may span it), or anywhere near.
    const near = rng.next();
    const basis =
      near < 0.2
        ? value
        : near < 0.5
          ? Math.max(1, value + Math.round(value * 0.01 * (2 * rng.next() - 1)))
          : Math.max(1, Math.round(value * (0.8 + 0.4 * rng.next())));
    const listedAt = T0 - rng.int(6 * DAY_MS);
    const now = T0;
    const period = st.sell.list.reprice_every_hours * HOUR_MS;
    const markup = Math.max(
      st.sell.list.min_markup,
      st.sell.list.markup - Math.floor((now - listedAt) / period) * st.sell.list.markup_step,
    );
    // Priced at listing, at some earlier step, or in the current step (the band applies).
    const when = rng.next();
    const pricedAt =
      when < 0.3
        ? listedAt
        : when < 0.5
          ? listedAt + rng.int(now - listedAt + 1)
          : now - rng.int(((now - listedAt) % period) + 1);
    // Mostly prices the strategy would keep, some it would not; some at the exact target (a
    // listing priced before the last step is kept only there).
    const band = st.sell.list.reprice_band;
    const price =
      rng.next() < 0.2
        ? Math.max(1, Math.round(value * markup))
        : Math.max(
            1,
            Math.round(value * markup * (1 - 1.3 * band - 0.01 + (2.6 * band + 0.02) * rng.next())),
          );
    // Locks ending anywhere, or soon (where the sides' deadlines differ before the next step).
    const lock = rng.next();
    const lockedValueUntil =
      lock < 0.5 ? listedAt + rng.int(9 * DAY_MS) : lock < 0.8 ? now + rng.int(2 * DAY_MS) : null;
    const listing: ListingView = {
      priceCents: price,
      listedAt,
      pricedAt,
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
    let steppedKept = 0;
    for (const { st, listing, now } of cases) {
      const d = decideListing(listing, st, now);
      const r = { lo: 0, hi: 0, until: 0 };
      const holds = keepRange(listing, st, now, r);
      expect(holds).toBe(d.action === 'keep');
      if (d.action !== 'keep') continue;
      kept++;
      // Priced before a step that lowered the markup: kept only at the exact target.
      const steps = (t: number) =>
        Math.floor((t - listing.listedAt) / (st.sell.list.reprice_every_hours * HOUR_MS));
      if (markupAfter(steps(listing.pricedAt), st) > markupAfter(steps(now), st)) {
        expect(r.hi - r.lo).toBeLessThan(listing.marketValueCents * 0.01 + 2);
        steppedKept++;
      }
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
    // And listings priced before the last step (the band does not apply to them).
    expect(steppedKept).toBeGreaterThan(50);
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
