/**
 * A sale is seen within a minute: the API has no listing read, and the vault is reconciled every
 * few minutes, but the balance rises at once when a listing sells. The bot reads the balance every
 * minute while a listing is up; a rise the books cannot explain makes it read the vault at once
 * and credit the sale with what the balance gained.
 */
import { describe, expect, it } from 'vitest';
import { HOUR_MS, MINUTE_MS, VirtualClock } from '../../src/core/clock.js';
import { driveUntil, fixture, START, TrackingClock, testBot, testStrategy, testWorld } from './helpers.js';

/** open, sweep and reconcile. */
const SLEEPERS = 3;

describe('a listing sale', () => {
  it('is credited within a minute and a half of the sale, not at the next 5-minute pass', async () => {
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    // Buyers come often (listings at 1.05x sell within hours); ticks of a minute so a sale can
    // fall between two reconciliations.
    const world = testWorld({
      dynamics: {
        others_pack_openings_per_hour: 0,
        others_shop_purchases_per_hour: 0,
        value_daily_volatility: 0,
        listing_fills_per_day_at_value: 40,
        tick_seconds: 60,
      },
    } as never);
    const strategy = testStrategy({
      open: { min_ev_ratio: 0, max_quantity: 3, sizing: 'fixed' },
      budget: { max_daily_spend_usd: 30, max_total_spend_usd: 30, min_balance_usd: 0, stop_loss_usd: 1e6 },
      sell: { threshold_usd: 25, list: { markup: 1.05, seller_fee_rate: 0.05, only_when_better: false } },
    });
    const f = fixture({ clock: virtual, world, strategy });
    const bot = testBot(f, { clock });
    await bot.start();
    const sales = () =>
      f.market.ledger().filter((e) => e.accountId === 'acct_t' && e.kind === 'listing_sale');
    for (let t = START; sales().length === 0 && t < START + 24 * HOUR_MS; t += 10 * MINUTE_MS)
      await driveUntil(clock, t, SLEEPERS);
    expect(sales().length).toBeGreaterThan(0);
    const first = sales()[0]!;
    await driveUntil(clock, first.at + 90_000, SLEEPERS);
    const listing = f.ledger.getListing(first.ref);
    await bot.stop();
    expect(listing).toMatchObject({ state: 'filled' });
    const fee =
      f.market.ledger().find((e) => e.kind === 'seller_fee' && e.ref === first.ref)?.amountCents ?? 0;
    expect(listing?.proceedsCents).toBe(first.amountCents + fee);
    expect(listing!.creditedAt! - first.at).toBeLessThanOrEqual(90_000);
  }, 120_000);
});
