/**
 * Where the bot raises each notification, with a recording Notifier in place of the webhooks:
 * orders confirmed (with big pulls), refused, in doubt; a missed sell-back window; the stop-loss;
 * the daily summary at UTC midnight on the injected clock.
 */
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../src/api/errors.js';
import type { PartnerApi } from '../../src/api/partner-api.js';
import * as notices from '../../src/bot/common/notices.js';
import { SellSide } from '../../src/bot/selling/sell-side.js';
import { dailySummaryLoop } from '../../src/bot/views/daily-summary.js';
import { DAY_MS } from '../../src/core/clock.js';
import type { Notifier, NotifyEvent } from '../../src/obs/notify/event.js';
import { strategy } from '../strategy-builder.js';
import { contextOf, executorOf, fault, fixture, START, testBot } from './helpers.js';

const BODY = { pack_type: 'lucky', category: 'pokemon', quantity: 3, risk_level: 'standard' } as const;

class Recorder implements Notifier {
  readonly events: NotifyEvent[] = [];
  constructor(readonly bigPullMultiple = 3) {}
  notify(e: NotifyEvent): void {
    this.events.push(e);
  }
  wants(): boolean {
    return true;
  }
  async close(): Promise<void> {}
  kinds(): string[] {
    return this.events.map((e) => e.event);
  }
}

describe('notifications raised by the bot', () => {
  it('an order booked: order_confirmed, and big_pull for pulls worth 3× the pack price', async () => {
    const f = fixture();
    const n = new Recorder(3);
    const ex = executorOf(f, { notifier: n });
    let big = 0;
    for (let i = 0; i < 5; i++) {
      const out = await ex.open({ body: BODY });
      if (out.status !== 'confirmed') throw new Error(out.status);
      big += out.confirmed.pulls.filter((p) => p.valueCents >= 3000).length;
      await f.clock.advance(61_000);
    }
    expect(n.kinds().filter((k) => k === 'order_confirmed')).toHaveLength(5);
    expect(big).toBeGreaterThan(0);
    const bigs = n.events.filter((e) => e.event === 'big_pull');
    expect(bigs).toHaveLength(big);
    expect(bigs[0]).toMatchObject({ account: 'main', data: { pack_price_cents: 1000 } });
    expect(bigs[0]!.id).toMatch(/^big_pull:/);
    const first = n.events[0]!;
    expect(first).toMatchObject({
      event: 'order_confirmed',
      account: 'main',
      at: START,
      data: { quantity: 3, charged_cents: 3000, category: 'pokemon', pack_type: 'lucky' },
    });
    expect(first.id).toBe(`order_confirmed:${first.data.order_key}`);
  });

  it('an order refused: order_failed; an answer lost: order_in_doubt, once per order', async () => {
    const f = fixture();
    const n = new Recorder();
    let drop = false;
    const api: PartnerApi = {
      ...f.api,
      purchasePacks: async (body, key) => {
        const r = await f.api.purchasePacks(body, key);
        if (drop)
          throw new TransportError(
            'reset',
            'connection reset after the order committed',
            'POST /packs/purchase',
          );
        return r;
      },
    };
    const ex = executorOf(f, { api, notifier: n });
    f.market.setFaults({ 'POST /packs/purchase': fault({ error_rate: 1, times: 1 }) });
    expect((await ex.open({ body: BODY })).status).toBe('failed');
    drop = true;
    const lost = await ex.open({ body: BODY });
    expect(lost.status).toBe('in_doubt');
    expect((await ex.send(lost.intent)).status).toBe('in_doubt');
    expect(n.events.map((e) => `${e.event} ${e.data.code ?? ''}`)).toEqual([
      'order_failed ORDER_REFUNDED',
      'order_in_doubt ',
      'order_in_doubt ',
    ]);
    // Raised at each send; the same id, so a webhook gets it once.
    expect(n.events[1]!.id).toBe(`order_in_doubt:${lost.intent.key}`);
    expect(n.events[2]!.id).toBe(n.events[1]!.id);
  });

  it('a pull decided after its 0.9 window: window_missed', async () => {
    const f = fixture();
    const n = new Recorder();
    const ex = executorOf(f);
    await ex.open({ body: BODY });
    await f.clock.advance(10 * 60_000);
    const sell = new SellSide({ ...contextOf(f), notifier: n, batchSize: 10 });
    await sell.process();
    const missed = n.events.filter((e) => e.event === 'window_missed');
    expect(missed.length).toBeGreaterThan(0);
    expect(missed[0]!.id).toMatch(/^window_missed:/);
    expect(f.sink.text).toContain('sell-back window missed');
  });

  it('the stop-loss guard starting to hold: stop_loss, once', async () => {
    const s = strategy(
      {
        budget: {
          max_daily_spend_usd: 1000,
          max_total_spend_usd: 1000,
          min_balance_usd: 0,
          stop_loss_usd: 0,
        },
      },
      { base: 'bot' },
    );
    const f = fixture({ strategy: s });
    const n = new Recorder();
    const bot = testBot(f, { notifier: n });
    // A stop-loss of 0 holds from the start (a marked P&L of 0 is not above it).
    for (let i = 0; i < 3; i++) {
      await bot.openOnce();
      await f.clock.advance(61_000);
    }
    expect(n.kinds().filter((k) => k === 'stop_loss')).toEqual(['stop_loss']);
    const e = n.events.find((x) => x.event === 'stop_loss')!;
    expect(e).toMatchObject({ account: 'main', data: { stop_loss_cents: 0, marked_pnl_cents: 0 } });
    expect(f.ledger.reportData(0, f.clock.now()).orders).toEqual([]);
  });

  it('daily_summary at each UTC midnight, from the report of the day that ended', async () => {
    const f = fixture();
    const n = new Recorder();
    const ex = executorOf(f);
    await ex.open({ body: BODY, expectedValueCents: 2800, stdevCents: 500 });
    const stop = new AbortController();
    const loop = dailySummaryLoop({
      clock: f.clock,
      ledger: f.ledger,
      notifier: n,
      accounts: ['main'],
      signal: stop.signal,
    });
    const midnight = Math.ceil(START / DAY_MS) * DAY_MS;
    await f.clock.advance(midnight - START - 1);
    expect(n.events).toEqual([]);
    await f.clock.advance(1);
    await f.clock.advance(DAY_MS);
    stop.abort();
    await loop;
    expect(n.events.map((e) => e.id)).toEqual([
      'daily_summary:main:2026-01-05',
      'daily_summary:main:2026-01-06',
    ]);
    expect(n.events[0]).toMatchObject({
      at: midnight,
      data: { day: '2026-01-05', orders: 1, packs: 3, spend_cents: 3000, payouts_cents: 0 },
    });
    expect(typeof n.events[0]!.data.luck_sigma).toBe('number');
    expect(n.events[1]!.data).toMatchObject({ orders: 0, packs: 0, luck_sigma: null });
    expect(n.events[0]!.summary).toMatch(
      /^2026-01-05: 3 packs in 1 orders, spent \$30\.00, .* luck [+-]\d\.\d\dσ$/,
    );
  });

  it('pause, resume and a fatal error are process-wide events', () => {
    expect(notices.paused(['file'], 5)).toMatchObject({
      event: 'paused',
      account: null,
      data: { reasons: ['file'] },
    });
    expect(notices.resumed(6).event).toBe('resumed');
    const e = Object.assign(new Error('key lacks rip:packs'), { code: 'FORBIDDEN' });
    expect(notices.fatal(e, 7)).toMatchObject({
      event: 'fatal',
      summary: 'stopping on a fatal error: FORBIDDEN key lacks rip:packs',
    });
  });
});
