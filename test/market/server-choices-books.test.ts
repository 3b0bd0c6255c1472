/**
 * What the simulator holds and when, where the spec leaves it open (world `rules`,
 * src/market/server-choices.ts): when listing proceeds arrive, how a bought card is named for
 * sell-back, what the vault shows and in which order, a shop card's sale_status, a pool's
 * total_cards, a chase pull's bucket, and how long an order takes to answer. Tables over the
 * default and the alternatives, over HTTP on a virtual clock that only the test moves.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/api/operations.js';
import type { Rules, WorldInput } from '../../src/market/world-schema.js';
import {
  buyCard,
  buyPacks,
  confWorld,
  expectError,
  ikey,
  pullCard,
  type Sim,
  sellBack,
  shopCards,
  startSim,
  untilOrderRunning,
  vault,
} from './conformance/support.js';

let sim: Sim | undefined;
afterEach(async () => {
  expect(sim?.market.audit() ?? []).toEqual([]);
  await sim?.close();
  sim = undefined;
});

async function start(rules: Partial<Rules>, edit?: (w: WorldInput) => void): Promise<Sim> {
  const w = confWorld();
  w.rules = { ...w.rules, ...rules };
  edit?.(w);
  sim = await startSim(w);
  return sim;
}

const entries = (s: Sim, account: string) => s.market.ledger().filter((e) => e.accountId === account);

describe('listing proceeds (rules.listing_proceeds_delay_seconds)', () => {
  it.each([0, 90])(
    'delay %i s: the card leaves at the sale, the money arrives after the delay',
    async (delay) => {
      const s = await start({ listing_proceeds_delay_seconds: delay, seller_fee_rate: 0.1 });
      // bob pulls a card and lists it; alice buys it.
      const pull = await pullCard(s, 'sk_bob');
      const price = Math.round(pull.value * 120) / 100;
      expect(
        (await s.call('POST', '/listings', { key: 'sk_bob', body: { card_id: pull.item.id, price } })).status,
      ).toBe(200);
      const before = entries(s, 'acct_b').length;
      const saleAt = s.clock.now();
      expect((await buyCard(s, { card_id: pull.item.id, max_price: price })).status).toBe(200);
      expect((await vault(s, 'sk_bob')).cards.map((c) => c.card_id)).not.toContain(pull.item.id);
      const paid = () => entries(s, 'acct_b').slice(before);
      if (delay > 0) {
        expect(paid()).toEqual([]);
        expect(s.market.dump().pending_proceeds).toHaveLength(1);
        await s.advance(delay - 1);
        expect(paid()).toEqual([]);
        await s.advance(1);
      }
      const cents = Math.round(price * 100);
      expect(paid().map((e) => [e.kind, e.amountCents, e.at])).toEqual([
        ['listing_sale', cents, saleAt + delay * 1000],
        ['seller_fee', -Math.round(cents * 0.1), saleAt + delay * 1000],
      ]);
      expect(s.market.dump().pending_proceeds).toEqual([]);
    },
  );

  it('proceeds still queued are saved and restored with the state', async () => {
    const s = await start({ listing_proceeds_delay_seconds: 600 });
    const pull = await pullCard(s, 'sk_bob');
    await s.call('POST', '/listings', { key: 'sk_bob', body: { card_id: pull.item.id, price: pull.value } });
    expect((await buyCard(s, { card_id: pull.item.id, max_price: pull.value })).status).toBe(200);
    const bytes = s.market.saveState();
    s.market.restoreState(bytes);
    expect(s.market.dump().pending_proceeds).toHaveLength(1);
    await s.advance(600);
    expect(entries(s, 'acct_b').some((e) => e.kind === 'listing_sale')).toBe(true);
  });
});

describe("a bought card's name for sell-back (rules.purchased_card_pull_id, purchased_card_pulled_at)", () => {
  it.each([
    ['transaction_id', 'null'],
    ['checkout_id', 'purchase_time'],
    ['opaque', 'null'],
  ] as const)('%s, pulled_at %s: the vault and sell-back agree', async (naming, pulledAt) => {
    const s = await start({ purchased_card_pull_id: naming, purchased_card_pulled_at: pulledAt });
    const card = (await shopCards(s))[0]!;
    const r = await buyCard(s, { card_id: card.id, max_price: card.price });
    expect(r.status).toBe(200);
    const entry = (await s.call('GET', '/vault')).json.cards.find(
      (c: { card_id: string }) => c.card_id === card.id,
    ) as { pull_id: string; pulled_at: string | null };
    const expected =
      naming === 'transaction_id'
        ? r.json.transaction_id
        : naming === 'checkout_id'
          ? r.json.checkout_id
          : undefined;
    if (expected) expect(entry.pull_id).toBe(expected);
    else expect([r.json.transaction_id, r.json.checkout_id, card.id]).not.toContain(entry.pull_id);
    expect(entry.pulled_at).toBe(pulledAt === 'null' ? null : new Date(s.clock.now()).toISOString());
    if (naming !== 'transaction_id') {
      const wrong = await sellBack(s, [{ card_id: card.id, pull_id: r.json.transaction_id }]);
      expect(wrong.json.results[0]).toMatchObject({ status: 'failed', error: 'unknown pull_id' });
    }
    const sold = await sellBack(s, [{ card_id: card.id, pull_id: entry.pull_id }]);
    expect(sold.json.results[0]).toMatchObject({ status: 'sold', payout_rate: 0.8 });
    const orders = (await s.call('GET', '/sim/v1/orders')).json.orders;
    expect(
      orders.find((o: { transaction_id?: string }) => o.transaction_id === r.json.transaction_id),
    ).toMatchObject({ pull_id: entry.pull_id });
  });
});

describe('the vault (rules.vault_sealed_packs, rules.vault_order)', () => {
  it.each([false, true])('sealed packs shown: %s', async (shown) => {
    const s = await start({ vault_sealed_packs: shown });
    const r = await buyPacks(s, { pack_type: 'sealedonly', quantity: 2 });
    expect(r.status).toBe(200);
    const v = (await s.call('GET', '/vault')).json;
    expect(OPERATIONS.getVault.response.safeParse(v).success).toBe(true);
    const ids = r.json.pulls.map((p: { item: { id: string } }) => p.item.id);
    if (!shown) {
      expect(v.cards).toEqual([]);
      expectError(await s.call('POST', '/listings', { body: { card_id: ids[0], price: 2 } }), 404);
      return;
    }
    expect(v.cards.map((c: { card_id: string }) => c.card_id)).toEqual(ids);
    for (const [i, c] of v.cards.entries())
      expect(c).toMatchObject({
        pull_id: r.json.pulls[i].pull_id,
        listed: false,
        buyback: null,
        item: { kind: 'sealed_pack' },
      });
    expectError(await s.call('POST', '/listings', { body: { card_id: ids[0], price: 2 } }), 400);
    const sb = await sellBack(s, [{ card_id: ids[0], pull_id: r.json.pulls[0].pull_id }]);
    expect(sb.json.results[0]).toMatchObject({ status: 'failed', error: 'sealed packs cannot be sold back' });
  });

  const orders: Rules['vault_order'][] = ['acquired', 'newest_first', 'card_id', 'value_desc'];
  it.each(orders)('order %s, also across pages', async (how) => {
    const s = await start({ vault_order: how });
    const pulled: { id: string; value: number }[] = [];
    for (let i = 0; i < 3; i++) {
      await s.advance(60);
      const r = await buyPacks(s, { pack_type: 'single' });
      expect(r.status).toBe(200);
      pulled.push({ id: r.json.pulls[0].item.id, value: r.json.pulls[0].value });
    }
    const byValue = [...pulled].sort((a, b) => b.value - a.value || (a.id < b.id ? -1 : 1));
    const expected = {
      acquired: pulled,
      newest_first: [...pulled].reverse(),
      card_id: [...pulled].sort((a, b) => (a.id < b.id ? -1 : 1)),
      value_desc: byValue,
    }[how].map((c) => c.id);
    const pages = [];
    for (let page = 1; page <= 2; page++)
      pages.push(...(await vault(s, 'sk_sim_full', { per_page: 2, page })).cards.map((c) => c.card_id));
    expect(pages).toEqual(expected);
  });
});

describe('catalog fields (rules.shop_sale_status, rules.pool_total_cards, rules.chase_bucket)', () => {
  it.each(['shop', 'available'])('sale_status of shop stock: %s', async (status) => {
    const s = await start({ shop_sale_status: status });
    const cards = (await s.call('GET', '/catalog/cards')).json.cards;
    expect(new Set(cards.map((c: { sale_status: string }) => c.sale_status))).toEqual(new Set([status]));
  });

  it.each([
    ['listed', 'chill', 12],
    ['all_bands', 'chill', 14],
    ['listed_and_chase', 'chill', 13],
    ['listed', 'standard', 14],
  ] as const)('total_cards %s at %s: %i', async (mode, risk, total) => {
    // basic: 2 sealed, 10 low, 2 high (zeroed at chill), and an active chase.
    const s = await start({ pool_total_cards: mode });
    const pool = (
      await s.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic', risk_level: risk } })
    ).json;
    expect(pool.cards.length).toBe(risk === 'chill' ? 12 : 14);
    expect(pool.total_cards).toBe(total);
  });

  it.each(['chase', 'grail'])("a chase pull's rarity_tier and bucket: %s", async (bucket) => {
    const s = await start({ chase_bucket: bucket }, (w) => {
      const basic = w.categories!.pokemon!.packs!.find((p) => p.pack_type === 'basic')!;
      basic.chase = { ...basic.chase!, probability: 1 };
    });
    const r = await buyPacks(s, { pack_type: 'basic' });
    expect(r.json.pulls[0].hit).toMatchObject({ is_chase: true, rarity_tier: bucket, bucket });
  });
});

describe('purchase report rows (rules.purchase_report_rows)', () => {
  it.each([
    ['per_pack', [10, 10, 10]],
    ['per_order', [30]],
  ] as const)('%s', async (mode, amounts) => {
    const s = await start({ purchase_report_rows: mode });
    expect((await buyPacks(s, { pack_type: 'basic', quantity: 3 })).status).toBe(200);
    const r = await s.call('GET', '/pulls', { key: 'sk_sim_full', query: { since: '2026-01-01T00:00:00Z' } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.pulls.map((p: { amount: number }) => p.amount)).toEqual(amounts);
    expect(s.market.dump().pack_openings).toBe(3);
  });
});

describe('how long an order takes to answer (rules.pack_purchase_answer_ms, card_purchase_answer_ms)', () => {
  const kinds = [
    {
      name: 'pack purchase',
      rules: { pack_purchase_answer_ms: 1500 },
      body: async () => ({ pack_type: 'basic' }),
      send: (s: Sim, b: Record<string, unknown>, k: string) => buyPacks(s, b, k),
    },
    {
      name: 'card purchase',
      rules: { card_purchase_answer_ms: 1500 },
      body: async (s: Sim) => {
        const c = (await shopCards(s))[0]!;
        return { card_id: c.id, max_price: c.price };
      },
      send: (s: Sim, b: Record<string, unknown>, k: string) => buyCard(s, b, k),
    },
  ];
  it.each(kinds)(
    '$name: running (409 to a retry) until the clock passes it, then one charge',
    async (kind) => {
      const s = await start(kind.rules);
      const body = await kind.body(s);
      const key = ikey();
      const first = kind.send(s, body, key);
      await untilOrderRunning(s);
      expectError(await kind.send(s, body, key), 409, 'IDEMPOTENCY_IN_PROGRESS');
      // The order commits when its time is up: nothing charged before.
      const charged = () =>
        s.market.ledger().filter((e) => e.kind === 'pack_purchase' || e.kind === 'card_purchase');
      expect(charged()).toEqual([]);
      const sentAt = s.clock.now();
      await s.advance(1.5);
      const r = await first;
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(charged().map((e) => e.at)).toEqual([sentAt + 1500]);
      expect((await kind.send(s, body, key)).json).toMatchObject({ idempotent_replay: true });
      expect(charged()).toHaveLength(1);
    },
  );

  it('0 ms (the default): answered at once', async () => {
    const s = await start({});
    expect((await buyPacks(s, { pack_type: 'basic' })).status).toBe(200);
  });
});
