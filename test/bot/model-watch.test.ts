/**
 * The bot's expected-vs-realized watch: from the ledger to `packbot_model_*` and the `model_drift`
 * notification. Orders are booked straight into an in-memory ledger (the whole bot on the
 * simulator is test/e2e/model-drift.test.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { ModelWatch, orderModel } from '../../src/bot/buying/model-watch.js';
import { DAY_MS, VirtualClock } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import { Metrics } from '../../src/obs/metrics.js';
import type { Notifier, NotifyEvent } from '../../src/obs/notify/event.js';
import { Ledger } from '../../src/store/ledger.js';
import { modelFromRows, modelOrders } from '../../src/store/model-orders.js';
import { listingCurve } from '../../src/strategy/listing-curve.js';
import { MODEL_PARTS } from '../../src/strategy/model-gap.js';
import type { OrderPromise } from '../../src/strategy/model-promise.js';
import { scorePool } from '../../src/strategy/score.js';
import { shortDigest, strategyDigest } from '../../src/strategy/strategy-digest.js';
import { band, card, pool } from '../fixtures/pools.js';
import { cardPull, packResponse, sealedPull, T0 } from '../store/fixtures.js';
import { flatLife } from '../strategy/helpers.js';
import { strategy } from '../strategy-builder.js';
import { testLogger } from './helpers.js';

const lister = (name: string) =>
  strategy({
    name,
    sell: {
      threshold_usd: 25,
      list: {
        ...flatLife,
        markup: 1.3,
        max_days: 3,
        seller_fee_rate: 0.05,
        fill: { model: 'hazard', fills_per_day_at_value: 1, price_sensitivity: 4 },
      },
    },
  });

class Collect implements Notifier {
  events: NotifyEvent[] = [];
  readonly bigPullMultiple = Number.POSITIVE_INFINITY;
  notify(e: NotifyEvent) {
    this.events.push(e);
  }
  wants() {
    return true;
  }
  async close() {}
}

function setup(s = lister('lister')) {
  // Read an hour after the listings' deadline.
  const clock = new VirtualClock(DEADLINE + 3_600_000);
  const ledger = Ledger.open(':memory:', { clock });
  const metrics = new Metrics({ defaultMetrics: false });
  const notifier = new Collect();
  const { log, sink } = testLogger();
  let current = s;
  const watch = new ModelWatch({
    account: 'main',
    api: {} as PartnerApi,
    ledger,
    clock,
    log,
    metrics,
    strategy: s,
    notifier,
    currentStrategy: () => current,
  });
  return { clock, ledger, metrics, notifier, watch, sink, use: (x: typeof s) => (current = x) };
}

/** A one-pack order of a 50 USD card, listed, then delisted and sold back at 0.8 (no buyer). */
function unsold(ledger: Ledger, s: ReturnType<typeof lister>, i: number) {
  const curve = listingCurve(s);
  const p = book(ledger, s, `unsold-${i}`, cardPull(`u${i}`, 50, '2026-01-01T12:05:00.000Z'), {
    packs: 1,
    priceCents: 4000,
    evCents: 5000,
    realizedEvCents: Math.round(5000 * curve.mean),
    sdCents: Math.round(5000 * Math.sqrt(curve.variance)),
    pLoss: 0.4,
    parts: {
      sell_back: { meanCents: 0, sdCents: 0 },
      listing: { meanCents: Math.round(5000 * curve.mean), sdCents: 0 },
      held: { meanCents: 0, sdCents: 0 },
    },
  });
  ledger.recordDecision({ pullId: p.pullId, action: 'list', reason: 'high', priceCents: 6500 });
  ledger.recordListing({ listingId: `l-${i}`, cardId: p.cardId, pullId: p.pullId, priceCents: 6500 }, T0);
  // No buyer for max_days: delisted and sold back at 0.8.
  ledger.recordListingUpdate(`l-${i}`, { delisted: true }, DEADLINE);
  ledger.recordDecision({ pullId: p.pullId, action: 'sell_back', reason: 'deadline' }, DEADLINE);
  ledger.recordSellBack([{ pull_id: p.pullId, card_id: p.cardId, status: 'sold', payout_amount: 40 }], {
    at: DEADLINE,
  });
}

const DEADLINE = T0 + 3 * DAY_MS;

const sample = (text: string, name: string, labels: string) =>
  Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1]);

describe('ModelWatch', () => {
  it("exports z per part, resolved packs and the resolved orders' counters", async () => {
    const { ledger, metrics, watch } = setup();
    const s = lister('lister');
    for (let i = 0; i < 10; i++) unsold(ledger, s, i);
    const snap = watch.refresh();
    expect(snap.figures.resolvedPacks).toBe(10);
    const text = await metrics.text();
    const z = snap.figures.parts.listing;
    expect(
      sample(text, 'packbot_model_gap_zscore', 'account="main",strategy="lister",part="listing"'),
    ).toBeCloseTo((z.realized - z.expected) / Math.sqrt(z.variance), 2);
    expect(sample(text, 'packbot_model_gap_zscore', 'account="main",strategy="lister",part="held"')).toBe(0);
    expect(sample(text, 'packbot_model_resolved_packs', 'account="main",strategy="lister"')).toBe(10);
    // Each resolved order returned 40 USD against 50 × the life's mean expected.
    expect(sample(text, 'packbot_model_realized_net_usd_total', 'account="main",strategy="lister"')).toBe(
      400,
    );
    expect(
      sample(text, 'packbot_model_expected_net_usd_total', 'account="main",strategy="lister"'),
    ).toBeCloseTo((10 * Math.round(5000 * listingCurve(s).mean)) / 100, 6);
    // Counters only add what is new.
    watch.refresh();
    expect(
      sample(
        await metrics.text(),
        'packbot_model_realized_net_usd_total',
        'account="main",strategy="lister"',
      ),
    ).toBe(400);
  });

  it('notifies model_drift once when a part passes |z| > 3 over 30 resolved packs', () => {
    const { ledger, notifier, watch, sink } = setup();
    const s = lister('lister');
    for (let i = 0; i < 29; i++) unsold(ledger, s, i);
    watch.refresh();
    // Far off already, but under 30 resolved packs: not yet.
    expect(notifier.events).toEqual([]);
    unsold(ledger, s, 29);
    watch.refresh();
    watch.refresh();
    const drift = notifier.events.filter((e) => e.event === 'model_drift');
    expect(drift.map((e) => e.data.part)).toEqual(['total', 'listing']);
    const e = drift[1]!;
    expect(e.account).toBe('main');
    expect(e.summary).toMatch(
      /^listing part of strategy lister is off its model: realized \$1,200\.00 vs expected/,
    );
    expect(e.data).toMatchObject({
      strategy: 'lister',
      version: shortDigest(strategyDigest(s)),
      part: 'listing',
      resolved_packs: 30,
      realized_cents: 120_000,
    });
    expect(e.data.z as number).toBeLessThan(-3);
    expect(sink.text).toContain('the strategy is off its model');
  });

  it('a reloaded strategy starts a fresh comparison; a renamed one drops the old gauges', async () => {
    const { ledger, metrics, watch, use } = setup();
    const s = lister('lister');
    for (let i = 0; i < 5; i++) unsold(ledger, s, i);
    watch.refresh();
    // The same name, another version: its own (empty) comparison, the counters carry on.
    use(strategy({ ...lister('lister'), sell: { ...s.sell, threshold_usd: 30 } }));
    expect(watch.refresh().figures.packs).toBe(0);
    let text = await metrics.text();
    expect(sample(text, 'packbot_model_resolved_packs', 'account="main",strategy="lister"')).toBe(0);
    expect(sample(text, 'packbot_model_realized_net_usd_total', 'account="main",strategy="lister"')).toBe(
      200,
    );
    use(lister('other'));
    watch.refresh();
    text = await metrics.text();
    expect(text).not.toMatch(/packbot_model_gap_zscore\{account="main",strategy="lister"/);
    expect(text).toMatch(/packbot_model_gap_zscore\{account="main",strategy="other",part="total"\} 0/);
    expect(text).toMatch(/packbot_model_realized_net_usd_total\{account="main",strategy="lister"\} 200/);
  });
});

describe('ModelWatch reads only what can still change', () => {
  it('orders resolved and past the listing horizon are summed once; the figures stay the full ones', () => {
    const { ledger, watch, clock } = setup();
    const s = lister('lister');
    for (let i = 0; i < 12; i++) unsold(ledger, s, i);
    const spy = vi.spyOn(ledger, 'modelRows');
    const first = watch.refresh();
    // An hour after the deadline the listings' spread still grows with their age: nothing settled.
    expect(spy.mock.calls[0]![0]).toMatchObject({ decidedSince: 0 });
    clock.advanceSync(10 * DAY_MS);
    const later = watch.refresh();
    const again = watch.refresh();
    expect(spy.mock.calls[2]![0]!.decidedSince).toBeGreaterThan(T0);
    // The same figures as a full recomputation from the ledger.
    const all = modelFromRows(ledger.modelRows({ account: 'main' }), clock.now()).report;
    for (const snap of [later, again]) {
      expect(snap.figures.total).toEqual(all.total);
      expect(snap.figures.parts).toEqual(all.parts);
      expect(snap.figures.resolvedPacks).toBe(12);
      expect(snap.resolvedRealizedCents).toBe(first.resolvedRealizedCents);
    }
  });
});

/** The one-pack order `id` of one pull, booked now with `promise` (a small one by default). */
function book(
  ledger: Ledger,
  s: ReturnType<typeof lister>,
  id: string,
  pull: ReturnType<typeof cardPull>,
  promise: OrderPromise = {
    packs: 1,
    priceCents: 1000,
    evCents: 1200,
    realizedEvCents: 1100,
    sdCents: 900,
    pLoss: 0.4,
    parts: {
      sell_back: { meanCents: 800, sdCents: 500 },
      listing: { meanCents: 900, sdCents: 200 },
      held: { meanCents: 0, sdCents: 0 },
    },
  },
) {
  const key = `key-order-${id}`;
  ledger.recordIntent({
    key,
    account: 'main',
    operation: 'pack',
    body: { pack_type: 'starter', category: 'pokemon', quantity: 1, risk_level: 'standard' },
    model: { strategy: s, category: 'pokemon', packType: 'starter', riskLevel: 'standard', promise },
  });
  ledger.markIntentSent(key);
  return ledger.confirmIntent(key, packResponse(`co-${id}`, [pull], promise.priceCents / 100, 1000))
    .pulls[0]!;
}

describe('ModelWatch settles an order as soon as its figures are final', () => {
  it('a sold-back order is summed once and not read again; a listed one waits for the horizon', () => {
    const { ledger, watch } = setup();
    const s = lister('lister');
    const p = book(ledger, s, 'sold', cardPull('sold', 10, '2026-01-01T12:05:00.000Z'));
    ledger.recordDecision({ pullId: p.pullId, action: 'sell_back', reason: 'low' });
    ledger.recordSellBack([{ pull_id: p.pullId, card_id: p.cardId, status: 'sold', payout_amount: 9 }]);
    unsold(ledger, s, 1);
    const spy = vi.spyOn(ledger, 'modelRows');
    watch.refresh();
    watch.refresh();
    const first = spy.mock.results[0]!.value.orders as { intentKey: string; modelRow: number }[];
    expect(spy.mock.calls[1]![0]!.skip).toEqual([
      first.find((o) => o.intentKey === 'key-order-sold')!.modelRow,
    ]);
    expect(spy.mock.results[1]!.value.orders.map((o: { intentKey: string }) => o.intentKey)).toEqual([
      'key-order-unsold-1',
    ]);
  });

  // Random histories (seeds drawn anew each run, printed on failure): orders sold back at once or
  // later, sealed packs, listings delisted and sold back; refreshes at random instants. Every
  // snapshot equals a recomputation from the whole ledger.
  for (const seed of [1, 2, ...Array.from({ length: 4 }, () => Math.floor(Math.random() * 2 ** 31))]) {
    it(`equals the whole ledger's figures at every refresh (seed ${seed})`, () => {
      const rng = new Rng(seed);
      const { ledger, watch, clock } = setup();
      const s = lister('lister');
      const waiting: { pullId: string; cardId: string }[] = [];
      const listed: { pullId: string; cardId: string; listingId: string }[] = [];
      for (let i = 0; i < 60; i++) {
        clock.advanceSync((1 + rng.int(600)) * 60_000);
        const kind = rng.int(5);
        const id = `s${seed}_n${i}`;
        if (kind === 0 || kind === 1) {
          const p = book(ledger, s, id, cardPull(id, 2 + rng.int(20), '2026-01-01T12:05:00.000Z'));
          ledger.recordDecision({ pullId: p.pullId, action: 'sell_back', reason: 'low' });
          if (kind === 0)
            ledger.recordSellBack([
              { pull_id: p.pullId, card_id: p.cardId, status: 'sold', payout_amount: 5 },
            ]);
          else waiting.push(p);
        } else if (kind === 2) {
          book(ledger, s, id, { ...sealedPull(id, 5 + rng.int(30)) } as never);
        } else {
          const p = book(ledger, s, id, cardPull(id, 30 + rng.int(40), '2026-01-01T12:05:00.000Z'));
          ledger.recordDecision({ pullId: p.pullId, action: 'list', reason: 'high', priceCents: 6500 });
          ledger.recordListing({
            listingId: `l-${id}`,
            cardId: p.cardId,
            pullId: p.pullId,
            priceCents: 6500,
          });
          listed.push({ ...p, listingId: `l-${id}` });
        }
        if (waiting.length > 0 && rng.int(3) === 0) {
          const w = waiting.splice(rng.int(waiting.length), 1)[0]!;
          ledger.recordSellBack([{ pull_id: w.pullId, card_id: w.cardId, status: 'sold', payout_amount: 4 }]);
        }
        if (listed.length > 0 && rng.int(4) === 0) {
          const l = listed.splice(rng.int(listed.length), 1)[0]!;
          ledger.recordListingUpdate(l.listingId, { delisted: true });
          ledger.recordDecision({ pullId: l.pullId, action: 'sell_back', reason: 'deadline' });
          ledger.recordSellBack([
            { pull_id: l.pullId, card_id: l.cardId, status: 'sold', payout_amount: 30 },
          ]);
        }
        if (rng.int(3) !== 0) continue;
        const snap = watch.refresh();
        const rows = ledger.modelRows({ account: 'main' });
        const all = modelFromRows(rows, clock.now()).report;
        // Sums of fractional listing marks, added in another order: equal to the last few bits.
        expectSums(snap.figures.total, all.total, `seed ${seed} step ${i}`);
        for (const part of MODEL_PARTS)
          expectSums(snap.figures.parts[part], all.parts[part], `seed ${seed} step ${i} ${part}`);
        expect(snap.figures.resolvedPacks, `seed ${seed} step ${i}`).toBe(all.resolvedPacks);
        expect(snap.figures.openPulls, `seed ${seed} step ${i}`).toBe(all.openPulls);
        expect(snap.resolvedExpectedCents, `seed ${seed} step ${i}`).toBe(
          watchless(ledger, clock.now()).expected,
        );
        expect(snap.resolvedRealizedCents, `seed ${seed} step ${i}`).toBe(
          watchless(ledger, clock.now()).realized,
        );
      }
    });
  }
});

function expectSums(got: object, want: object, what: string) {
  const g = got as Record<string, number>;
  expect(Object.keys(g).sort(), what).toEqual(Object.keys(want).sort());
  for (const [k, v] of Object.entries(want) as [string, number][]) {
    if (Number.isInteger(v)) expect(g[k], `${what} ${k}`).toBe(v);
    else expect(Math.abs(g[k]! - v), `${what} ${k}`).toBeLessThanOrEqual(1e-9 * Math.abs(v));
  }
}

/** The resolved orders' counters recomputed from the whole ledger. */
function watchless(ledger: Ledger, now: number): { expected: number; realized: number } {
  const { orders } = modelOrders(ledger.modelRows({ account: 'main' }), now);
  let expected = 0;
  let realized = 0;
  for (const o of orders) {
    if (!o.pulls.every((p) => p.state === 'resolved')) continue;
    expected += o.promise.packs * o.promise.realizedEvCents;
    realized += o.pulls.reduce((n, p) => n + p.cents, 0);
  }
  return { expected, realized };
}

describe('orderModel', () => {
  it("records the row with its pool's parts, or nothing when the pool is not at hand", () => {
    const s = lister('lister');
    const p = pool({ bands: [band('b', 1, 1, 100, 2)], cards: [card('x', 'b', 10), card('y', 'b', 60)] });
    const row = scorePool(p, s);
    const m = orderModel(row, [p], s, 3)!;
    expect(m).toMatchObject({ strategy: s, category: 'pokemon', packType: 'test', riskLevel: 'standard' });
    expect(m.promise.packs).toBe(3);
    expect(m.promise.parts.sell_back.meanCents).toBe(450);
    expect(orderModel(row, [], s, 3)).toBeNull();
  });
});
