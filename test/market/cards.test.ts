import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CardPurchaseResponse, ShopCardsPage, VaultPage } from '../../src/api/schemas.js';
import { ikey, type Sim, startSim } from './helpers.js';

let sim: Sim;
beforeEach(async () => {
  sim = await startSim();
});
afterEach(async () => {
  expect(sim.market.audit()).toEqual([]);
  await sim.close();
});

const shop = async (query: Record<string, string | number> = {}) =>
  ShopCardsPage.parse((await sim.call('GET', '/catalog/cards', { query })).json);
const buyCard = (card_id: string, max_price: number, key = 'sk_sim_full', idem = ikey()) =>
  sim.call('POST', '/cards/purchase', { body: { card_id, max_price }, idem, key });

describe('shop catalog', () => {
  it('lists shop stock by id ascending, paginated, with total', async () => {
    const all = await shop({ per_page: 1000 });
    expect(all.total).toBe(25);
    const ids = all.cards.map((c) => c.id);
    expect(ids).toEqual([...ids].sort());
    const pages = [];
    for (let p = 1; p <= 3; p++)
      pages.push(...(await shop({ page: p, per_page: 10 })).cards.map((c) => c.id));
    expect(pages).toEqual(ids);
    for (const c of all.cards) expect(c.sale_status).toBe('shop');
    for (const q of [{ page: 0 }, { per_page: 1001 }, { per_page: 'x' }, { category: 'cars' }])
      expect((await sim.call('GET', '/catalog/cards', { query: q })).status).toBe(400);
  });
});

describe('card purchase', () => {
  it('buys shop stock for price + 1 USD fee; the card leaves the shop and lands in the vault', async () => {
    const card = (await shop()).cards[0]!;
    const r = await buyCard(card.id, card.price);
    expect(r.status).toBe(200);
    const body = CardPurchaseResponse.parse(r.json);
    expect(body).toMatchObject({
      source: 'shop',
      listing_id: null,
      price: card.price,
      fee: 1,
      card_id: card.id,
    });
    expect(body.total_charged).toBeCloseTo(card.price + 1, 5);
    expect((await shop()).total).toBe(24);
    const vault = VaultPage.parse((await sim.call('GET', '/vault')).json);
    const entry = vault.cards.find((e) => e.card_id === card.id)!;
    // Sell-back id of a bought card is its transaction_id; basis = min(price paid, value at purchase).
    expect(entry.pull_id).toBe(body.transaction_id);
    expect(entry.buyback!.basis_value).toBe(Math.min(card.price, card.market_value));
    const sold = (
      await sim.call('POST', '/cards/sell-back', {
        body: { items: [{ card_id: card.id, pull_id: body.transaction_id }] },
      })
    ).json;
    expect(sold.results[0]).toMatchObject({ status: 'sold', payout_rate: 0.8 });
    const again = await buyCard(card.id, 1000);
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('CARD_NO_LONGER_AVAILABLE');
  });

  it('PRICE_CHANGED with card_id, price and max_price; nothing charged', async () => {
    const card = (await shop()).cards[1]!;
    const r = await buyCard(card.id, card.price - 0.01);
    expect(r.status).toBe(409);
    expect(r.json).toEqual({
      error: expect.any(String),
      code: 'PRICE_CHANGED',
      card_id: card.id,
      price: card.price,
      max_price: card.price - 0.01,
    });
    expect(sim.market.ledger()).toHaveLength(0);
  });

  it('404 for no such card; 400 for a bad body or missing key', async () => {
    expect((await buyCard('no-such-card', 10)).status).toBe(404);
    expect((await sim.call('POST', '/cards/purchase', { body: { card_id: 'x' }, idem: ikey() })).status).toBe(
      400,
    );
    expect(
      (await sim.call('POST', '/cards/purchase', { body: { card_id: '', max_price: 1 }, idem: ikey() }))
        .status,
    ).toBe(400);
    expect((await sim.call('POST', '/cards/purchase', { body: { card_id: 'x', max_price: 1 } })).status).toBe(
      400,
    );
  });

  it('buys another user listing (source listing, seller paid) and refuses OWN_LISTING', async () => {
    const card = (await shop()).cards[2]!;
    const bought = CardPurchaseResponse.parse((await buyCard(card.id, card.price, 'sk_bob')).json);
    const price = Math.round(bought.item.market_value * 150) / 100;
    const listing = await sim.call('POST', '/listings', { body: { card_id: card.id, price }, key: 'sk_bob' });
    expect(listing.status).toBe(200);
    expect(listing.json).toMatchObject({ card_id: card.id, price, title: card.name });
    const own = await buyCard(card.id, 10_000, 'sk_bob');
    expect(own.json.code).toBe('OWN_LISTING');
    const r = CardPurchaseResponse.parse((await buyCard(card.id, price)).json);
    expect(r).toMatchObject({ source: 'listing', listing_id: listing.json.listing_id, price });
    const bobLedger = sim.market
      .ledger()
      .filter((e) => e.accountId === 'acct_b')
      .map((e) => e.kind);
    expect(bobLedger).toEqual(['card_purchase', 'card_fee', 'listing_sale', 'seller_fee']);
    // Simulated other users' listings can be bought too (ids from the admin API).
    const others = (await sim.call('GET', '/sim/v1/listings')).json.listings;
    expect(others.length).toBeGreaterThan(0);
    const o = await buyCard(others[0].card_id, others[0].price);
    expect(o.json.source).toBe('listing');
  });

  it('enforces the daily card count cap and the spend cap (429 DAILY_CARD_LIMIT_REACHED)', async () => {
    const cards = (await shop()).cards.sort((a, b) => a.price - b.price);
    let spent = 0;
    let bought = 0;
    for (const c of cards) {
      const r = await buyCard(c.id, c.price);
      if (r.status === 429) {
        expect(r.json.code).toBe('DAILY_CARD_LIMIT_REACHED');
        expect(bought === 3 || spent + c.price > 100).toBe(true);
        break;
      }
      expect(r.status).toBe(200);
      spent += c.price;
      bought++;
    }
    expect(bought).toBeLessThanOrEqual(3);
    await sim.advance(86400);
    const next = (await shop()).cards.sort((a, b) => a.price - b.price)[0]!;
    expect((await buyCard(next.id, next.price)).status).toBe(200);
  });

  it('needs_review can be injected; replays return the stored result', async () => {
    await sim.call('POST', '/sim/v1/faults', {
      body: { 'POST /cards/purchase': { needs_review_rate: 1, times: 1 } },
    });
    const card = (await shop()).cards[3]!;
    const k = ikey();
    const r = await buyCard(card.id, card.price, 'sk_sim_full', k);
    expect(r.json.needs_review).toBe(true);
    const replay = await buyCard(card.id, card.price, 'sk_sim_full', k);
    expect(replay.json).toMatchObject({ idempotent_replay: true, transaction_id: r.json.transaction_id });
    expect(sim.market.ledger().filter((e) => e.kind === 'card_purchase')).toHaveLength(1);
    expect((await buyCard(card.id, card.price + 1, 'sk_sim_full', k)).status).toBe(422);
  });
});

describe('listings', () => {
  async function pulledCard() {
    const r = await sim.call('POST', '/packs/purchase', { body: { pack_type: 'single' }, idem: ikey() });
    return r.json.pulls[0];
  }

  it('holder only, above the minimum and at most 2x market value; delist returns it to the vault', async () => {
    const p = await pulledCard();
    const post = (body: unknown, key = 'sk_sim_full') => sim.call('POST', '/listings', { body, key });
    expect((await post({ card_id: p.item.id, price: 1 })).status).toBe(400);
    expect((await post({ card_id: p.item.id, price: p.value * 2 + 0.01 })).status).toBe(400);
    expect((await post({ card_id: p.item.id, price: -5 })).status).toBe(400);
    expect((await post({ card_id: p.item.id, price: p.value }, 'sk_bob')).status).toBe(404);
    expect((await post({ card_id: 'nope', price: 10 })).status).toBe(404);
    const ok = await post({ card_id: p.item.id, price: p.value * 2 });
    expect(ok.status).toBe(200);
    expect(ok.json.title).toBe(p.item.name);
    const v1 = VaultPage.parse((await sim.call('GET', '/vault')).json).cards[0]!;
    expect(v1).toMatchObject({ listed: true, buyback: null });
    expect(
      (await sim.call('DELETE', '/listings', { body: { card_id: p.item.id }, key: 'sk_bob' })).status,
    ).toBe(404);
    const del = await sim.call('DELETE', '/listings', { body: { card_id: p.item.id } });
    expect(del.json).toEqual({ card_id: p.item.id, delisted: true });
    const v2 = VaultPage.parse((await sim.call('GET', '/vault')).json).cards[0]!;
    expect(v2.listed).toBe(false);
    expect(v2.buyback).not.toBeNull();
    expect((await sim.call('DELETE', '/listings', { body: { card_id: p.item.id } })).status).toBe(400);
  });

  it('shipped cards leave the vault and cannot be sold back', async () => {
    const p = await pulledCard();
    expect((await sim.call('POST', '/sim/v1/ship', { body: { card_id: p.item.id } })).status).toBe(200);
    expect((await sim.call('GET', '/vault')).json.total).toBe(0);
    const r = (
      await sim.call('POST', '/cards/sell-back', {
        body: { items: [{ card_id: p.item.id, pull_id: p.pull_id }] },
      })
    ).json;
    expect(r.results[0].status).toBe('failed');
  });
});
