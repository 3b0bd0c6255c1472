/**
 * The path from a pack order's answer to the sell-back of its pulls: the pulls are booked and
 * decided in one commit, and their sell-back is the next request the bot sends, before any read
 * or listing of the pass that follows.
 */
import { describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { SellSide } from '../../src/bot/selling/sell-side.js';
import { MINUTE_MS, VirtualClock } from '../../src/core/clock.js';
import { contextOf, driveUntil, executorOf, fixture, START, TrackingClock, testBot } from './helpers.js';

/** Every API call by name, in the order made. */
function calls(api: PartnerApi) {
  const seen: string[] = [];
  const wrapped = Object.fromEntries(
    Object.entries(api).map(([name, fn]) => [
      name,
      (...args: unknown[]) => {
        seen.push(name);
        return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    ]),
  ) as unknown as PartnerApi;
  return { api: wrapped, seen };
}

describe('pull → sell-back', () => {
  it('books an order and decides its pulls in one commit', async () => {
    const f = fixture();
    const sell = new SellSide({ ...contextOf(f), batchSize: 10 });
    const commits: number[] = [];
    const ex = executorOf(f, {
      // Inside the booking: the order is there, and no decision yet.
      decideBooked: (c) => {
        commits.push(f.ledger.undecidedPulls('main').length);
        sell.decideBooked(c.pulls);
      },
    });
    const out = await ex.open({
      body: { pack_type: 'lucky', category: 'pokemon', quantity: 10, risk_level: 'standard' },
    });
    if (out.status !== 'confirmed') throw new Error(out.status);
    const cards = out.confirmed.pulls.filter((p) => p.kind === 'card');
    expect(commits).toEqual([cards.length]);
    expect(f.ledger.undecidedPulls('main')).toEqual([]);
    // The rows handed on say what was recorded.
    for (const p of cards) expect(p.status).toBe(f.ledger.getPull(p.pullId)!.status);
    expect(cards.some((p) => p.status === 'sell_pending')).toBe(true);
  });

  it('a failing decision leaves the order booked and its pulls undecided for the next pass', async () => {
    const f = fixture();
    const ex = executorOf(f, {
      decideBooked: (c) => {
        f.ledger.recordDecision({ pullId: c.pulls[0]!.pullId, action: 'hold', reason: 'test' });
        throw new Error('a bug');
      },
    });
    const out = await ex.open({
      body: { pack_type: 'lucky', category: 'pokemon', quantity: 5, risk_level: 'standard' },
    });
    expect(out.status).toBe('confirmed');
    expect(f.ledger.undecidedPulls('main')).toHaveLength(5);
    const sell = new SellSide({ ...contextOf(f), batchSize: 10 });
    await sell.process();
    expect(f.ledger.undecidedPulls('main')).toEqual([]);
  });

  it("sends the sell-back right after the purchase's answer, and each pull once", async () => {
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    const f = fixture({ clock: virtual });
    const rec = calls(f.api);
    const bot = testBot(f, { api: rec.api, clock });
    await bot.start();
    await driveUntil(clock, START + 30 * MINUTE_MS, 3);
    await bot.stop();
    const orders = rec.seen.filter((c) => c === 'purchasePacks').length;
    expect(orders).toBeGreaterThan(20);
    // Next after an order: its sell-back (or, when every pull of it is listed, its listings).
    const next = rec.seen.flatMap((c, i) => (c === 'purchasePacks' ? [rec.seen[i + 1]] : []));
    expect(next.filter((c) => c !== 'sellBack' && c !== 'createListing')).toEqual([]);
    expect(next.filter((c) => c === 'sellBack').length).toBeGreaterThan(orders / 2);
    const sold = f.ledger.reportData(0, clock.now()).sellbacks;
    expect(new Set(sold.map((s) => s.pullId)).size).toBe(sold.length);
    expect(f.ledger.pullsAwaitingSale('main')).toEqual([]);
    expect(f.market.audit()).toEqual([]);
  });
});
