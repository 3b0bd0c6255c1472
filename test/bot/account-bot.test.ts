import { describe, expect, it } from 'vitest';
import { isPartnerApiError } from '../../src/api/errors.js';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { HOUR_MS, MINUTE_MS, nextUtcMidnight, VirtualClock } from '../../src/core/clock.js';
import { KillSwitch } from '../../src/obs/kill-switch.js';
import { strategy } from '../strategy-builder.js';
import { driveUntil, fault, fixture, START, TrackingClock, testBot, testWorld } from './helpers.js';

/** A PartnerApi that records every error code and every purchase time. */
function recording(api: PartnerApi, clock: { now(): number }) {
  const errors: string[] = [];
  const purchases: number[] = [];
  const wrapped = Object.fromEntries(
    Object.entries(api).map(([name, fn]) => [
      name,
      async (...args: unknown[]) => {
        try {
          const r = await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
          if (name === 'purchasePacks') purchases.push(clock.now());
          return r;
        } catch (e) {
          errors.push(isPartnerApiError(e) ? e.code : String(e));
          throw e;
        }
      },
    ]),
  ) as unknown as PartnerApi;
  return { api: wrapped, errors, purchases };
}

function makeBot(
  opts: {
    world?: ReturnType<typeof testWorld>;
    strategy?: ReturnType<typeof strategy>;
    killSwitch?: KillSwitch;
  } = {},
) {
  const virtual = new VirtualClock(START);
  const clock = new TrackingClock(virtual);
  const f = fixture({
    clock: virtual,
    ...(opts.world ? { world: opts.world } : {}),
    ...(opts.strategy ? { strategy: opts.strategy } : {}),
  });
  const rec = recording(f.api, clock);
  const fatal: unknown[] = [];
  const bot = testBot(f, {
    api: rec.api,
    clock,
    onFatal: (e) => fatal.push(e),
    ...(opts.killSwitch ? { killSwitch: opts.killSwitch } : {}),
  });
  return { f, clock, bot, rec, fatal };
}

describe('AccountBot scheduler', () => {
  it('uses every allowed purchase slot, waking exactly at next_purchase_at, with no 429', async () => {
    const { clock, bot, rec, fatal, f } = makeBot({
      world: testWorld({ rules: { max_packs_per_day: 1000 } }),
    });
    await bot.start();
    await driveUntil(clock, START + 2 * HOUR_MS, 3);
    await bot.stop();
    expect(fatal).toEqual([]);
    expect(rec.errors).toEqual([]);
    // One purchase per minute from the start: 121 slots in two hours (both ends included).
    expect(rec.purchases.length).toBe(121);
    for (let i = 1; i < rec.purchases.length; i++)
      expect(rec.purchases[i]! - rec.purchases[i - 1]!).toBe(MINUTE_MS);
    // Every pull accounted for: sold, listed or held; none left undecided.
    expect(f.ledger.undecidedPulls('main')).toEqual([]);
    expect(f.ledger.pullsAwaitingSale('main')).toEqual([]);
    const pulls = f.ledger.reportData(0, clock.now()).pulls;
    expect(pulls.length).toBe(121 * 3);
    const low = pulls.filter((p) => p.valueCents < 2500);
    for (const p of low) expect(f.ledger.saleOf(p.pullId)?.payoutRate).toBe(0.9);
    expect(f.market.audit()).toEqual([]);
  });

  it('opens exactly the daily limit, with no DAILY_LIMIT 429, and resumes after midnight', async () => {
    const world = testWorld({ rules: { max_packs_per_day: 12, min_seconds_between_purchases: 60 } });
    const { clock, bot, rec, fatal } = makeBot({ world });
    await bot.start();
    const midnight = nextUtcMidnight(START);
    await driveUntil(clock, midnight - MINUTE_MS, 3);
    expect(rec.purchases.length).toBe(4); // 4 orders of 3 packs
    expect(bot.lastWait).toBe('daily pack limit reached');
    await driveUntil(clock, midnight + 10 * MINUTE_MS, 3);
    await bot.stop();
    expect(fatal).toEqual([]);
    expect(rec.errors).toEqual([]);
    expect(rec.purchases.length).toBe(8);
    expect(rec.purchases[4]).toBe(midnight);
  });

  it('the kill switch pauses opening but not selling back', async () => {
    let paused = false;
    const ks = new KillSwitch(undefined, () => 0);
    const { clock, bot, rec, f } = makeBot({ killSwitch: ks });
    await bot.start();
    await driveUntil(clock, START + 90_000, 3);
    expect(rec.purchases.length).toBe(2);
    ks.pause();
    paused = true;
    await driveUntil(clock, START + 30 * MINUTE_MS, 3);
    expect(rec.purchases.length).toBe(2);
    expect(f.ledger.undecidedPulls('main')).toEqual([]);
    expect(f.ledger.pullsAwaitingSale('main')).toEqual([]);
    expect(bot.lastWait).toBe('kill switch is on');
    ks.resume();
    await driveUntil(clock, START + 31 * MINUTE_MS, 3);
    await bot.stop();
    expect(paused).toBe(true);
    expect(rec.purchases.length).toBeGreaterThan(2);
  });

  it('paused, the open loop looks again at the account cadence, and a resume wakes it at once', async () => {
    const ks = new KillSwitch(undefined, () => 0);
    ks.pause();
    const { clock, bot, rec } = makeBot({ killSwitch: ks });
    let looks = 0;
    const openOnce = bot.packs.openOnce.bind(bot.packs);
    bot.packs.openOnce = () => {
      looks++;
      return openOnce();
    };
    await bot.start();
    await driveUntil(clock, START + 30 * MINUTE_MS, 3);
    // One look at the start and one a minute (CADENCE.accountMs), not one every idleMs (5 s).
    expect(looks).toBeGreaterThanOrEqual(30);
    expect(looks).toBeLessThanOrEqual(31);
    expect(rec.purchases).toEqual([]);
    // One watch at a time, not one per minute paused.
    expect(ks.watchers).toBeLessThanOrEqual(1);
    const resumedAt = clock.now() + 10_000;
    await driveUntil(clock, resumedAt, 3);
    ks.resume();
    await driveUntil(clock, resumedAt + 1000, 3);
    await bot.stop();
    expect(rec.purchases[0]).toBe(resumedAt);
  });

  it('a refunded order is re-scored and opened again; nothing is charged twice', async () => {
    const { clock, bot, rec, f, fatal } = makeBot();
    f.market.setFaults({ 'POST /packs/purchase': fault({ error_rate: 1, times: 1 }) });
    await bot.start();
    await driveUntil(clock, START + 5 * MINUTE_MS, 3);
    await bot.stop();
    expect(fatal).toEqual([]);
    expect(rec.errors).toEqual(['ORDER_REFUNDED']);
    const intents = f.ledger.intentCounts();
    expect(intents.failed).toBe(1);
    expect(intents.confirmed).toBe(rec.purchases.length);
    expect(rec.purchases[0]).toBe(START);
  });

  it('stops when the strategy stops wanting to open (budget) and says why', async () => {
    const s = strategy(
      {
        budget: {
          max_daily_spend_usd: 60,
          max_total_spend_usd: 1000,
          min_balance_usd: 0,
          stop_loss_usd: 1000,
        },
      },
      { base: 'bot' },
    );
    const { clock, bot, rec } = makeBot({ strategy: s });
    await bot.start();
    await driveUntil(clock, START + HOUR_MS, 3);
    await bot.stop();
    expect(rec.purchases.length).toBe(2); // 2 × 3 packs × 10 USD = the 60 USD daily cap
    expect(bot.lastWait).toMatch(/daily spend cap/);
  });

  it('exports the budget limits and the spend counted against them (the cap alerts)', async () => {
    const s = strategy(
      {
        budget: {
          max_daily_spend_usd: 60,
          max_total_spend_usd: 1000,
          min_balance_usd: 25,
          stop_loss_usd: 1000,
        },
      },
      { base: 'bot' },
    );
    const { f, clock, bot } = makeBot({ strategy: s });
    await bot.start();
    await driveUntil(clock, START + HOUR_MS, 3);
    await bot.stop();
    const t = await f.metrics.text();
    expect(t).toContain('packbot_budget_min_balance_usd 25');
    expect(t).toContain('packbot_budget_spend_cap_usd{period="day"} 60');
    expect(t).toContain('packbot_budget_spend_cap_usd{period="total"} 1000');
    expect(t).toContain('packbot_budget_spent_usd{period="day"} 60');
    expect(t).toContain('packbot_budget_spent_usd{period="total"} 60');
  });
});
