/**
 * Spec "States and transitions", card table: one test per row, plus the rule for cards bought
 * with a card purchase. Over HTTP; time moves only through the admin clock endpoint.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  CardPurchaseResponse,
  DelistResponse,
  Listing,
  PackPurchaseResponse,
  SellBackResponse,
} from '../../../src/api/schemas.js';
import {
  balance,
  buyCard,
  buyPacks,
  DAY_S,
  payout,
  pullCard,
  type Sim,
  sellBack,
  shopCards,
  startConf,
  vault,
} from './support.js';

let sim: Sim;
afterEach(async () => {
  expect(sim.market.audit()).toEqual([]);
  await sim.close();
});

describe('card states (spec table rows)', () => {
  it('in shop stock --card purchase (price <= max_price, balance)--> buyer vault; charged price + fee', async () => {
    sim = await startConf();
    const card = (await shopCards(sim))[0]!;
    const before = await balance(sim);
    const r = await buyCard(sim, { card_id: card.id, max_price: card.price });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const body = CardPurchaseResponse.parse(r.json);
    expect(body).toMatchObject({
      card_id: card.id,
      source: 'shop',
      listing_id: null,
      price: card.price,
      fee: 1,
    });
    expect(body.total_charged).toBeCloseTo(card.price + 1, 9);
    expect(body.remaining_balance).toBeCloseTo(before - card.price - 1, 9);
    expect(await balance(sim)).toBeCloseTo(before - card.price - 1, 9);
    const v = await vault(sim);
    expect(v.cards.map((c) => c.card_id)).toContain(card.id);
    expect((await shopCards(sim)).map((c) => c.id)).not.toContain(card.id);
  });

  it('listed by another user --card purchase--> buyer vault; response source is listing', async () => {
    sim = await startConf();
    // bob (another account) pulls a card and lists it; alice buys it.
    const pull = await pullCard(sim, 'sk_bob');
    const price = Math.round(pull.value * 150) / 100;
    const listed = await sim.call('POST', '/listings', {
      key: 'sk_bob',
      body: { card_id: pull.item.id, price },
    });
    expect(listed.status, JSON.stringify(listed.json)).toBe(200);
    const listing = Listing.parse(listed.json);
    const before = await balance(sim);
    const r = await buyCard(sim, { card_id: pull.item.id, max_price: price });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const body = CardPurchaseResponse.parse(r.json);
    expect(body).toMatchObject({ source: 'listing', listing_id: listing.listing_id, price, fee: 1 });
    expect(await balance(sim)).toBeCloseTo(before - price - 1, 9);
    expect((await vault(sim)).cards.map((c) => c.card_id)).toContain(pull.item.id);
    expect((await vault(sim, 'sk_bob')).cards.map((c) => c.card_id)).not.toContain(pull.item.id);

    // A listing by a simulated user (admin view) is bought the same way.
    const other = (await sim.call('GET', '/sim/v1/listings')).json.listings[0];
    const r2 = await buyCard(sim, { card_id: other.card_id, max_price: other.price });
    expect(r2.status, JSON.stringify(r2.json)).toBe(200);
    expect(r2.json).toMatchObject({ source: 'listing', listing_id: other.listing_id });
  });

  it('pack pool --pack purchase--> pulled card in the vault; consolation pulls produce sealed packs', async () => {
    sim = await startConf();
    const r = await buyPacks(sim, { pack_type: 'basic', quantity: 4 });
    expect(r.status).toBe(200);
    const body = PackPurchaseResponse.parse(r.json);
    const v = await vault(sim);
    for (const p of body.pulls.filter((x) => x.kind === 'card'))
      expect(v.cards.find((c) => c.card_id === p.item.id)?.pull_id).toBe(p.pull_id);
    await sim.advance(60);
    const sealed = PackPurchaseResponse.parse(
      (await buyPacks(sim, { pack_type: 'sealedonly', quantity: 2 })).json,
    );
    expect(sealed.pulls).toHaveLength(2);
    for (const p of sealed.pulls) {
      expect(p.kind).toBe('sealed_pack');
      expect(p.buyback).toBeNull();
      expect(p.hit.bucket).toBe('sealed');
      expect(Object.keys(p.item).sort()).toEqual(['category', 'id', 'image_url', 'name', 'set']);
    }
  });

  it('in vault --list card (holder, min < price <= 2x value)--> listed; title is the card name', async () => {
    sim = await startConf();
    const pull = await pullCard(sim);
    const price = Math.round(pull.value * 200) / 100;
    const r = await sim.call('POST', '/listings', { body: { card_id: pull.item.id, price } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(Listing.parse(r.json)).toMatchObject({ card_id: pull.item.id, price });
    expect(r.json.title).toBe(pull.item.name);
    const entry = (await vault(sim)).cards.find((c) => c.card_id === pull.item.id)!;
    expect(entry.listed).toBe(true);
    expect(entry.buyback).toBeNull();
  });

  it('listed --delist--> in vault; returns delisted: true', async () => {
    sim = await startConf();
    const pull = await pullCard(sim);
    expect(
      (await sim.call('POST', '/listings', { body: { card_id: pull.item.id, price: pull.value } })).status,
    ).toBe(200);
    const r = await sim.call('DELETE', '/listings', { body: { card_id: pull.item.id } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(DelistResponse.parse(r.json)).toEqual({ card_id: pull.item.id, delisted: true });
    const entry = (await vault(sim)).cards.find((c) => c.card_id === pull.item.id)!;
    expect(entry.listed).toBe(false);
    expect(entry.buyback).not.toBeNull();
    // Back in the vault, it can be sold back.
    const sold = await sellBack(sim, [{ card_id: pull.item.id, pull_id: pull.pull_id }]);
    expect(sold.json.results[0].status).toBe('sold');
  });

  it('in vault --sell-back within 5 minutes of the pull--> sold back at 0.9 of the value', async () => {
    sim = await startConf({ volatility: 0.5 });
    const pull = await pullCard(sim);
    await sim.advance(299);
    const before = await balance(sim);
    const r = await sellBack(sim, [{ card_id: pull.item.id, pull_id: pull.pull_id }]);
    expect(r.status).toBe(200);
    const body = SellBackResponse.parse(r.json);
    expect(body.results[0]).toMatchObject({
      status: 'sold',
      payout_rate: 0.9,
      payout_amount: payout(pull.value, 0.9),
    });
    expect(body.total_paid).toBe(payout(pull.value, 0.9));
    expect(body.remaining_balance).toBeCloseTo(before + payout(pull.value, 0.9), 9);
    expect((await vault(sim)).cards.map((c) => c.card_id)).not.toContain(pull.item.id);
  });

  it('in vault --sell-back after 5 minutes, up to 7 days--> 0.8 of the value at pull (not the market value)', async () => {
    sim = await startConf({ volatility: 0.5 });
    const pull = await pullCard(sim);
    const pull2 = await pullCard(sim);
    await sim.advance(301);
    const early = await sellBack(sim, [{ card_id: pull2.item.id, pull_id: pull2.pull_id }]);
    expect(early.json.results[0]).toMatchObject({
      payout_rate: 0.8,
      payout_amount: payout(pull2.value, 0.8),
    });
    await sim.advance(6 * DAY_S);
    const entry = (await vault(sim)).cards.find((c) => c.card_id === pull.item.id)!;
    expect(entry.value).not.toBe(pull.value); // the market moved
    expect(entry.buyback).toMatchObject({
      rate: 0.8,
      basis_value: pull.value,
      amount: payout(pull.value, 0.8),
    });
    const r = await sellBack(sim, [{ card_id: pull.item.id, pull_id: pull.pull_id }]);
    expect(r.json.results[0]).toMatchObject({
      status: 'sold',
      payout_rate: 0.8,
      payout_amount: payout(pull.value, 0.8),
    });
  });

  it('in vault --sell-back after 7 days--> 0.8 of the current market value', async () => {
    sim = await startConf({ volatility: 0.5 });
    const pull = await pullCard(sim);
    await sim.advance(7 * DAY_S + 60);
    const entry = (await vault(sim)).cards.find((c) => c.card_id === pull.item.id)!;
    expect(entry.value).not.toBe(pull.value);
    expect(entry.buyback).toMatchObject({ rate: 0.8, basis_value: entry.value, locked_value_until: null });
    const r = await sellBack(sim, [{ card_id: pull.item.id, pull_id: pull.pull_id }]);
    expect(r.json.results[0]).toMatchObject({
      status: 'sold',
      payout_rate: 0.8,
      payout_amount: payout(entry.value, 0.8),
    });
  });

  it('sold back --sell-back again for the same pull--> already_sold with the earlier sale, no second payout', async () => {
    sim = await startConf();
    const pull = await pullCard(sim);
    const item = { card_id: pull.item.id, pull_id: pull.pull_id };
    const first = SellBackResponse.parse((await sellBack(sim, [item])).json).results[0]!;
    const after = await balance(sim);
    await sim.advance(3600);
    const again = SellBackResponse.parse((await sellBack(sim, [item])).json);
    expect(again.results[0]).toMatchObject({
      status: 'already_sold',
      transaction_id: first.transaction_id,
      payout_amount: first.payout_amount,
      payout_rate: first.payout_rate,
    });
    expect(again.total_paid).toBe(0);
    expect(await balance(sim)).toBe(after);
  });

  it('listed --sell-back--> rejected: a listed card must be delisted first', async () => {
    sim = await startConf();
    const pull = await pullCard(sim);
    await sim.call('POST', '/listings', { body: { card_id: pull.item.id, price: pull.value } });
    const before = await balance(sim);
    const r = await sellBack(sim, [{ card_id: pull.item.id, pull_id: pull.pull_id }]);
    expect(r.status).toBe(200);
    expect(r.json.results[0].status).toBe('failed');
    expect(typeof r.json.results[0].error).toBe('string');
    expect(r.json.total_paid).toBe(0);
    expect(await balance(sim)).toBe(before);
    expect((await vault(sim)).cards.find((c) => c.card_id === pull.item.id)?.listed).toBe(true);
  });
});

describe('a card bought with card purchase: sell-back basis min(price paid, value at purchase) for 7 days', () => {
  it('shop price above value: basis is the value at purchase, fixed while the market moves, then market value', async () => {
    sim = await startConf({ volatility: 0.5 });
    const card = (await shopCards(sim))[0]!;
    expect(card.price).toBeGreaterThan(card.market_value);
    const body = CardPurchaseResponse.parse(
      (await buyCard(sim, { card_id: card.id, max_price: card.price })).json,
    );
    const basis = Math.min(body.price, card.market_value);
    await sim.advance(3 * DAY_S);
    const entry = (await vault(sim)).cards.find((c) => c.card_id === card.id)!;
    expect(entry.pull_id).toBe(body.transaction_id);
    expect(entry.value).not.toBe(card.market_value);
    expect(entry.buyback).toMatchObject({ basis_value: basis, amount: payout(basis, entry.buyback!.rate) });
    await sim.advance(4 * DAY_S + 60);
    const later = (await vault(sim)).cards.find((c) => c.card_id === card.id)!;
    expect(later.buyback).toMatchObject({ basis_value: later.value, locked_value_until: null });
    const r = await sellBack(sim, [{ card_id: card.id, pull_id: body.transaction_id }]);
    expect(r.json.results[0]).toMatchObject({ status: 'sold', payout_amount: payout(later.value, 0.8) });
  });

  it('listing price below value: basis is the price paid', async () => {
    sim = await startConf({ volatility: 0.5 });
    const pull = await pullCard(sim, 'sk_bob');
    const price = Math.round(pull.value * 60) / 100;
    expect(
      (await sim.call('POST', '/listings', { key: 'sk_bob', body: { card_id: pull.item.id, price } })).status,
    ).toBe(200);
    const body = CardPurchaseResponse.parse(
      (await buyCard(sim, { card_id: pull.item.id, max_price: price })).json,
    );
    await sim.advance(2 * DAY_S);
    const entry = (await vault(sim)).cards.find((c) => c.card_id === pull.item.id)!;
    expect(entry.buyback!.basis_value).toBe(price);
    const r = await sellBack(sim, [{ card_id: pull.item.id, pull_id: body.transaction_id }]);
    expect(r.json.results[0]).toMatchObject({
      status: 'sold',
      payout_amount: payout(price, r.json.results[0].payout_rate),
    });
  });
});
