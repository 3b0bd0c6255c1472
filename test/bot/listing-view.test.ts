/**
 * One listing view: the read API's listings (the dashboard's table) show what the listing watch
 * will do. They used to be built on the card's value at the pull while the watch decides on the
 * vault's current value, so once the value moved the dashboard's next price and `sell_back_at`
 * were not the ones the watch acted on. Each figure here is checked against the watch's own acts.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../src/api/partner-api.js';
import type { AccountBot } from '../../src/bot/account/account-bot.js';
import { RunnerView } from '../../src/bot/views/read-model.js';
import { MINUTE_MS } from '../../src/core/clock.js';
import { toCents, toUsd } from '../../src/core/money.js';
import { ListingsResponse, type ListingView } from '../../src/obs/api-schemas.js';
import { KillSwitch } from '../../src/obs/kill-switch.js';
import { listingPriceCents } from '../../src/strategy/listing-model.js';
import { strategy } from '../strategy-builder.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { type Fixture, fixture, testBot, testWorld } from './helpers.js';

afterEach(removeTempDirs);

const BODY = { pack_type: 'lucky', category: 'pokemon', quantity: 3, risk_level: 'standard' } as const;

/** Nothing sells, so a listing lives until the watch ends it. */
const noFills = testWorld({
  dynamics: {
    others_pack_openings_per_hour: 0,
    others_shop_purchases_per_hour: 0,
    value_daily_volatility: 0,
    listing_fills_per_day_at_value: 0,
  },
});

/** Listed at 1.2 × value, a step of 0.05 a day down to 1.05, given up after 3 days. */
const s = strategy(
  {
    sell: {
      threshold_usd: 25,
      list: {
        markup: 1.2,
        markup_step: 0.05,
        min_markup: 1.05,
        reprice_every_hours: 24,
        max_days: 3,
        seller_fee_rate: 0.05,
        only_when_better: false,
      },
    },
  },
  { base: 'bot' },
);

/** The fixture's API whose vault shows every card at `factor` × its value once `moved` is set. */
function movingVault(f: Fixture, factor: number): { api: PartnerApi; move: () => void } {
  let moved = false;
  const api: PartnerApi = {
    ...f.api,
    getVault: async (query) => {
      const page = await f.api.getVault(query);
      if (!moved) return page;
      const cards = page.cards.map((c) => ({ ...c, value: toUsd(Math.round(toCents(c.value) * factor)) }));
      return { ...page, cards };
    },
  };
  return { api, move: () => (moved = true) };
}

function viewOf(f: Fixture, bot: AccountBot): () => ListingView[] {
  const dir = tempDir('packbot-listing-view-');
  const view = new RunnerView({
    mode: 'live',
    embedded: true,
    ledger: f.ledger,
    killSwitch: new KillSwitch(join(dir, 'PAUSE'), () => f.clock.now()),
    bots: [bot],
    now: () => f.clock.now(),
  });
  return () => ListingsResponse.parse(view.listings({})).listings;
}

describe('the listings view', () => {
  it('shows the value, next price and sell_back_at the listing watch acts on once the value moved', async () => {
    const f = fixture({ world: noFills, strategy: s });
    const { api, move } = movingVault(f, 1.5);
    const bot = testBot(f, { api });
    const listings = viewOf(f, bot);
    for (let i = 0; i < 10 && f.ledger.activeListings('main').length === 0; i++) {
      expect((await bot.executor.open({ body: BODY })).status).toBe('confirmed');
      await bot.sell.process();
      await f.clock.advance(MINUTE_MS);
    }
    const listing = f.ledger.activeListings('main')[0]!;
    const pull = f.ledger.getPull(listing.pullId!)!;
    const row = () => listings().find((l) => l.listing_id === listing.listingId)!;
    const priceNow = () => f.ledger.activeListingForCard(listing.cardId)?.priceCents;
    // A watch pass: the reconciliation the account bot runs at its listing cadence.
    const watch = () => bot.recover();

    // The card's value rises by half after the pull; the watch reads it and reprices at once.
    move();
    await watch();
    const value = Math.round(pull.valueCents * 1.5);
    expect(priceNow()).toBe(listingPriceCents(value, 1.2, s));
    const shown = row();
    expect(toCents(shown.value_usd!)).toBe(value);

    // The next step of the schedule is the watch's next reprice, at that time and price.
    const next = shown.schedule[0]!;
    expect(next.markup).toBe(1.15);
    await f.clock.advance(Date.parse(next.at) - f.clock.now());
    await watch();
    expect(priceNow()).toBe(toCents(next.price_usd!));

    // A value above the locked basis makes the end of the lock worth waiting for: the watch keeps
    // the listing past max_days and gives up at the deadline the view shows, not before.
    const sellBackAt = Date.parse(row().sell_back_at);
    expect(sellBackAt).toBe(Date.parse(row().lock_ends_at!) + MINUTE_MS);
    expect(sellBackAt).toBeGreaterThan(listing.createdAt + 3 * 24 * 60 * MINUTE_MS);
    await f.clock.advance(sellBackAt - MINUTE_MS - f.clock.now());
    await watch();
    expect(priceNow()).toBeDefined();
    expect(row().sell_back_at).toBe(new Date(sellBackAt).toISOString());
    await f.clock.advance(MINUTE_MS);
    await watch();
    expect(priceNow()).toBeUndefined();
    expect(f.ledger.decisionsFor(pull.pullId).at(-1)?.action).toBe('sell_back');
  });
});
