import { describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../src/api/partner-api.js';
import type { SellBackItem } from '../../src/api/schemas.js';
import { SellSide } from '../../src/bot/selling/sell-side.js';
import {
  contextOf,
  executorOf,
  type Fixture,
  failingListingWrites,
  fault,
  fixture,
  poisonCard,
} from './helpers.js';

async function buy(f: Fixture, quantity: number, api: PartnerApi = f.api) {
  const ex = executorOf(f, { api });
  const out = await ex.open({
    body: { pack_type: 'lucky', category: 'pokemon', quantity, risk_level: 'standard' },
  });
  if (out.status !== 'confirmed') throw new Error(`purchase ${out.status}`);
  return out;
}

/**
 * A sell side whose listing requests fail (a 500, after the client's retries) for the cards
 * `fails` names, with at least three pulls decided for listing and none listed yet.
 */
async function listingsWaiting(f: Fixture, fails: (cardId: string) => boolean) {
  const { api, tried } = failingListingWrites(f, 'createListing', fails);
  const sell = new SellSide({ ...contextOf(f, api), batchSize: 10 });
  // Orders until at least three pulls are worth listing (the rest are decided for sell-back).
  while (f.ledger.pullsAwaitingListing('main').length < 3) {
    await buy(f, 10, api);
    sell.decideOpenPulls();
  }
  return { sell, tried, waiting: f.ledger.pullsAwaitingListing('main').length };
}

async function metric(f: Fixture, name: string): Promise<number> {
  const m = await f.metrics.registry.getSingleMetricAsString(name);
  const line = m.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}_count `));
  // A labelled counter (`account`) has no sample before its first step: 0.
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

describe('SellSide', () => {
  it('sells low pulls back in the 0.9 window in batches of at most 10 and lists high ones at the capped price', async () => {
    const f = fixture();
    const batches: SellBackItem[][] = [];
    const api: PartnerApi = {
      ...f.api,
      sellBack: (items) => {
        batches.push(items);
        return f.api.sellBack(items);
      },
    };
    // 3 orders of 10 before deciding anything: 30 pulls, ~21 low.
    const sell = new SellSide({ ...contextOf(f, api), batchSize: 10 });
    for (let i = 0; i < 3; i++) {
      sell.markReceived((await buy(f, 10, api)).confirmed.pulls);
      await f.clock.advance(60_000);
    }
    // Bought 2 and 1 minute ago and just now: every window is still open.
    await sell.process();
    const pulls = f.ledger
      .holdings('main')
      .concat(f.ledger.reportData(0, f.clock.now()).pulls.filter((p) => p.status === 'sold'));
    const low = pulls.filter((p) => p.valueCents < 2500);
    const high = pulls.filter((p) => p.valueCents >= 2500);
    expect(low.length + high.length).toBe(30);
    expect(batches.every((b) => b.length >= 1 && b.length <= 10)).toBe(true);
    expect(batches.flat().length).toBe(low.length);
    for (const p of low) {
      const sale = f.ledger.saleOf(p.pullId);
      expect(sale?.payoutRate).toBe(0.9);
      expect(sale?.payoutCents).toBe(Math.round(p.valueCents * 0.9));
    }
    const listings = f.ledger.activeListings('main');
    expect(listings).toHaveLength(high.length);
    for (const l of listings) {
      const p = f.ledger.getPull(l.pullId!)!;
      expect(l.priceCents).toBe(Math.round(p.valueCents * 1.2));
      expect(p.status).toBe('listed');
    }
    const vault = await f.api.getVault({ category: 'pokemon', per_page: 200 });
    expect(vault.cards.filter((c) => c.listed)).toHaveLength(high.length);
    expect(vault.cards.filter((c) => !c.listed)).toHaveLength(0);
    expect(await metric(f, 'packbot_sellback_window_missed_total')).toBe(0);
    expect(await metric(f, 'packbot_decision_latency_seconds')).toBe(low.length);
    expect(await metric(f, 'packbot_listings_active')).toBe(high.length);
    // Nothing kept for the listed pulls: the arrival times do not pile up over a long run.
    expect(sell.timedPulls).toBe(0);
  });

  it('counts a missed window, and sells at the late rate per the fallback rule', async () => {
    const f = fixture();
    await buy(f, 5);
    await f.clock.advance(6 * 60_000); // the bot was down past the 5-minute window
    const sell = new SellSide({ ...contextOf(f), batchSize: 10 });
    await sell.process();
    const low = f.ledger.reportData(0, f.clock.now()).pulls.filter((p) => p.valueCents < 2500);
    expect(low.length).toBeGreaterThan(0);
    for (const p of low) expect(f.ledger.saleOf(p.pullId)?.payoutRate).toBe(0.8);
    expect(await metric(f, 'packbot_sellback_window_missed_total')).toBe(low.length);
    expect(f.sink.messages()).toContain('sell-back window missed before a decision; using the fallback rule');
  });

  it('keeps pulls pending when the sell-back request fails, and sells them on the next pass', async () => {
    const f = fixture();
    await buy(f, 4);
    f.market.setFaults({ 'POST /cards/sell-back': fault({ error_rate: 1, times: 1 }) });
    const sell = new SellSide({ ...contextOf(f), batchSize: 10 });
    await sell.process();
    const pending = f.ledger.pullsAwaitingSale('main');
    expect(pending.length).toBeGreaterThan(0);
    await sell.process();
    expect(f.ledger.pullsAwaitingSale('main')).toHaveLength(0);
    for (const p of pending) expect(f.ledger.saleOf(p.pullId)?.payoutRate).toBe(0.9);
  });

  it('stops listing at the first failed listing and lists the rest on the next pass', async () => {
    const f = fixture();
    let failing = true;
    const { sell, tried, waiting } = await listingsWaiting(f, () => failing);
    await sell.process();
    // One listing tried (the client had retried it): the others were not sent behind it.
    expect(tried).toHaveLength(1);
    expect(f.ledger.pullsAwaitingListing('main')).toHaveLength(waiting);
    expect(f.ledger.pullsAwaitingSale('main')).toHaveLength(0);
    failing = false;
    await sell.process();
    expect(f.ledger.pullsAwaitingListing('main')).toHaveLength(0);
    expect(f.ledger.activeListings('main')).toHaveLength(waiting);
  });

  it('lists a card the service keeps failing after the others, so it holds them back one pass at most', async () => {
    const f = fixture();
    const poison = poisonCard();
    const { sell, tried, waiting } = await listingsWaiting(f, poison.fails);
    await sell.process();
    expect(tried).toEqual([poison.card()]);
    // The next pass lists the others first, then fails on the same card again.
    await sell.process();
    expect(tried).toHaveLength(waiting + 1);
    expect(tried.at(-1)).toBe(poison.card());
    expect(f.ledger.pullsAwaitingListing('main').map((p) => p.cardId)).toEqual([poison.card()]);
    expect(f.ledger.activeListings('main')).toHaveLength(waiting - 1);
  });

  it('stops delisting at the first failed delisting of unwanted listings, and tries that card last', async () => {
    const f = fixture();
    const { sell } = await listingsWaiting(f, () => false);
    await sell.process();
    const listed = f.ledger.activeListings('main');
    // An operator holds every listed pull: each listing is to be delisted.
    for (const l of listed)
      f.ledger.recordDecision({ pullId: l.pullId!, action: 'hold', reason: 'operator' });
    const poison = poisonCard();
    const { api, tried } = failingListingWrites(f, 'deleteListing', poison.fails);
    const side = new SellSide({ ...contextOf(f, api), batchSize: 10 });
    expect(await side.delistUnwanted()).toBe(0);
    expect(tried).toEqual([poison.card()]);
    expect(await side.delistUnwanted()).toBe(listed.length - 1);
    expect(tried.at(-1)).toBe(poison.card());
    expect(f.ledger.activeListings('main').map((l) => l.cardId)).toEqual([poison.card()]);
  });

  it('holds sealed packs and never tries to sell them back', async () => {
    const f = fixture();
    const { testWorld } = await import('./helpers.js');
    const world = testWorld({
      categories: {
        pokemon: {
          packs: [
            {
              pack_type: 'lucky',
              name: 'Sealed only',
              price: 10,
              risk_levels: ['standard'],
              bands: [
                {
                  bucket_id: 's',
                  min_value: 3,
                  max_value: 5,
                  is_consolation: true,
                  odds: { standard: 1 },
                  generate: { count: 20 },
                },
              ],
            },
          ],
        },
      },
    });
    const g = fixture({ world });
    void f;
    await buy(g, 3);
    const sell = new SellSide({ ...contextOf(g), batchSize: 10 });
    await sell.process();
    const held = g.ledger.holdings('main');
    expect(held).toHaveLength(3);
    expect(held.every((p) => p.kind === 'sealed_pack' && p.status === 'held')).toBe(true);
  });
});
