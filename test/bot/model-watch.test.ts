/**
 * The bot's expected-vs-realized watch: from the ledger to `packbot_model_*` and the `model_drift`
 * notification. Orders are booked straight into an in-memory ledger (the whole bot on the
 * simulator is test/e2e/model-drift.test.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { ModelWatch, orderModel } from '../../src/bot/buying/model-watch.js';
import { DAY_MS, VirtualClock } from '../../src/core/clock.js';
import { Metrics } from '../../src/obs/metrics.js';
import type { Notifier, NotifyEvent } from '../../src/obs/notify/event.js';
import { Ledger } from '../../src/store/ledger.js';
import { modelFromRows } from '../../src/store/model-orders.js';
import { listingCurve } from '../../src/strategy/listing-curve.js';
import type { OrderPromise } from '../../src/strategy/model-promise.js';
import { scorePool } from '../../src/strategy/score.js';
import { shortDigest, strategyDigest } from '../../src/strategy/strategy-digest.js';
import { band, card, pool } from '../fixtures/pools.js';
import { cardPull, packResponse, T0 } from '../store/fixtures.js';
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
  const promise: OrderPromise = {
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
  };
  const key = `key-unsold-${i}`;
  ledger.recordIntent({
    key,
    account: 'main',
    operation: 'pack',
    body: { pack_type: 'starter', category: 'pokemon', quantity: 1, risk_level: 'standard' },
    model: { strategy: s, category: 'pokemon', packType: 'starter', riskLevel: 'standard', promise },
  });
  ledger.markIntentSent(key);
  const { pulls } = ledger.confirmIntent(
    key,
    packResponse(`co-${i}`, [cardPull(`u${i}`, 50, '2026-01-01T12:05:00.000Z')], 40, 1000),
  );
  const p = pulls[0]!;
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
