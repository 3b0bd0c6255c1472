import { describe, expect, it } from 'vitest';
import { TransportError } from '../../src/api/errors.js';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { FailureOrder } from '../../src/bot/common/failure-order.js';
import { InDoubtResolver, pullOf } from '../../src/bot/doubt/in-doubt.js';
import { reconcile } from '../../src/bot/selling/reconciler.js';
import { SellSide } from '../../src/bot/selling/sell-side.js';
import { DAY_MS, HOUR_MS } from '../../src/core/clock.js';
import { strategy } from '../strategy-builder.js';
import {
  contextOf,
  executorOf,
  type Fixture,
  failingListingWrites,
  fixture,
  poisonCard,
  testWorld,
} from './helpers.js';

const BODY = { pack_type: 'lucky', category: 'pokemon', quantity: 3, risk_level: 'standard' } as const;

/** An order of 3 at 10 USD recorded and marked sent (what the executor does before a request). */
function sentIntent(f: Fixture, key: string) {
  const intent = f.ledger.recordIntent({
    key,
    account: 'main',
    operation: 'pack',
    body: BODY,
    unitPriceCents: 1000,
  });
  f.ledger.markIntentSent(intent.key);
  return intent;
}

/** An order the service charged whose answer was lost, settled (as the resolver does) by its pulls. */
async function settledByItsPulls(f: Fixture, key: string) {
  const intent = sentIntent(f, key);
  const answer = await f.api.purchasePacks(BODY, `service-side-${key}`);
  f.ledger.markInDoubt(intent.key, 'TRANSPORT_RESET');
  const ids = answer.pulls.map((p) => p.pull_id);
  const vault = (await f.api.getVault({ category: 'pokemon' })).cards;
  f.ledger.confirmBySettlement(intent.key, {
    quantity: 3,
    totalChargedCents: 3000,
    pulls: vault.filter((c) => ids.includes(c.pull_id!)).map(pullOf),
    by: 'evidence: 3 pull(s) in the vault',
  });
  return intent;
}

async function buyAndSettle(f: Fixture, orders: number) {
  const ex = executorOf(f);
  const sell = new SellSide({ ...contextOf(f), batchSize: 10 });
  for (let i = 0; i < orders; i++) {
    const out = await ex.open({
      body: BODY,
    });
    expect(out.status).toBe('confirmed');
    await sell.process();
    await f.clock.advance(60_000);
  }
  return sell;
}

describe('reconciler and listing watch', () => {
  it('finds nothing to correct right after trading', async () => {
    const f = fixture();
    await buyAndSettle(f, 3);
    const r = await reconcile(contextOf(f));
    expect(r.missing).toEqual([]);
    expect(r.unknown).toEqual([]);
    expect(r.balanceDriftCents).toBe(0);
    expect(r.listings).toEqual({ filled: 0, repriced: 0, delisted: 0, drift: 0, proceedsCents: 0 });
    expect(r.strayListings).toBe(0);
  });

  it('delists a listing the ledger does not know (its answer was lost), so the pull can be sold', async () => {
    const f = fixture();
    const ex = executorOf(f);
    const out = await ex.open({
      body: BODY,
    });
    if (out.status !== 'confirmed') throw new Error('purchase failed');
    const pull = out.confirmed.pulls[0]!;
    // Our listing went through on the service, but the process died before recording it.
    await f.api.createListing({ card_id: pull.cardId, price: (pull.valueCents * 1.1) / 100 });
    await f.clock.advance(1000);
    const r = await reconcile(contextOf(f));
    expect(r.strayListings).toBe(1);
    const vault = await f.api.getVault({ category: 'pokemon' });
    expect(vault.cards.find((c) => c.card_id === pull.cardId)?.listed).toBe(false);
  });

  it('notices a listing removed and a card shipped outside the bot, and exports the drift', async () => {
    const f = fixture();
    await buyAndSettle(f, 1);
    const listed = f.ledger.holdings('main').filter((p) => p.status === 'listed');
    expect(listed.length).toBeGreaterThan(0);
    const victim = listed[0]!;
    await f.api.deleteListing({ card_id: victim.cardId });
    const first = await reconcile(contextOf(f));
    expect(first.listings.drift).toBe(1);
    expect(f.ledger.getPull(victim.pullId)?.status).toBe('open');
    f.market.ship(victim.cardId);
    // (A change at the very instant of a vault read is not judged by that read.)
    await f.clock.advance(1000);
    const second = await reconcile(contextOf(f));
    expect(second.missing).toEqual([victim.pullId]);
    expect(f.ledger.getPull(victim.pullId)?.status).toBe('gone');
    expect(second.balanceDriftCents).toBe(0);
    const gauge = await f.metrics.registry.getSingleMetricAsString('packbot_reconcile_vault_drift_cards');
    expect(gauge).toMatch(/packbot_reconcile_vault_drift_cards 1\b/);
    expect(f.sink.messages()).toContain('card left the vault outside the bot');
  });

  it('records listing fills with their proceeds, and delists and sells back what did not sell in max_days', async () => {
    const f = fixture();
    await buyAndSettle(f, 10);
    const listed = f.ledger.activeListings('main');
    expect(listed.length).toBeGreaterThan(3);
    let filled = 0;
    for (let h = 0; h < 4 * 24; h += 6) {
      await f.clock.advance(6 * HOUR_MS);
      const r = await reconcile(contextOf(f));
      filled += r.listings.filled;
      expect(r.balanceDriftCents).toBe(0);
      expect(r.missing).toEqual([]);
    }
    const sell = new SellSide({ ...contextOf(f), batchSize: 10 });
    await sell.process();
    expect(filled).toBeGreaterThan(0);
    const rows = f.ledger.reportData(0, f.clock.now()).listings;
    const fills = rows.filter((l) => l.state === 'filled');
    expect(fills.length).toBe(filled);
    // Proceeds are the price less the marketplace's 5% fee, as the simulator credits them.
    for (const l of fills) expect(l.proceedsCents).toBe(l.priceCents - Math.round(l.priceCents * 0.05));
    // After 3 days (strategy max_days) nothing is still listed: unsold cards were delisted and sold.
    expect(f.clock.now()).toBeGreaterThan(listed[0]!.createdAt + 3 * DAY_MS);
    expect(f.ledger.activeListings('main')).toEqual([]);
    for (const l of rows.filter((x) => x.state === 'delisted'))
      expect(f.ledger.getPull(l.pullId!)?.status).toBe('sold');
  });

  it('ends the watch at the first failed delisting, and acts on a card the service keeps failing last', async () => {
    const list = { markup: 1.2, seller_fee_rate: 0.05, only_when_better: false, reprice_every_hours: 1 };
    const f = fixture({ strategy: strategy({ sell: { threshold_usd: 25, list } }, { base: 'bot' }) });
    await buyAndSettle(f, 10);
    expect(f.ledger.activeListings('main').length).toBeGreaterThan(2);
    await f.clock.advance(2 * HOUR_MS); // every listing is due a reprice (delist, list again)
    const poison = poisonCard();
    const { api, tried } = failingListingWrites(f, 'deleteListing', poison.fails);
    const o = { ...contextOf(f, api), delistFailures: new FailureOrder() };
    const first = await reconcile(o);
    // One delisting tried (the client had retried it): the others were not sent behind it.
    expect(tried).toEqual([poison.card()]);
    expect(first.listings.repriced).toBe(0);
    const second = await reconcile(o);
    // The next pass reprices the others first, then fails on the same card again.
    const again = tried.slice(1);
    expect(again.length).toBeGreaterThan(1);
    expect(again.at(-1)).toBe(poison.card());
    expect(again.slice(0, -1)).not.toContain(poison.card());
    expect(second.listings.repriced).toBe(again.length - 1);
    expect(f.ledger.activeListingForCard(poison.card())?.repricedAt ?? null).toBeNull();
  });

  it('adopts vault cards pulled by our own attempts (a charge the ledger missed) and sells them', async () => {
    const f = fixture({ world: testWorld({ rules: { min_seconds_between_purchases: 0 } }) });
    const ex = executorOf(f);
    // An order re-sent once, confirmed; then a service that forgot the key ran a second copy of it.
    const intent = sentIntent(f, 'pb_main_twice00');
    f.ledger.markInDoubt(intent.key, 'TRANSPORT_RESET');
    expect((await ex.send(f.ledger.getIntent(intent.key)!)).status).toBe('confirmed');
    await f.clock.advance(20_000);
    await f.api.purchasePacks(BODY, 'forgotten-copy-1');
    await f.clock.advance(5_000);
    await f.api.purchasePacks(BODY, 'forgotten-copy-2');
    // Someone else's pack, opened in the app an hour later: not ours.
    await f.clock.advance(3_600_000);
    await f.api.purchasePacks(BODY, 'owner-in-the-app');
    await f.clock.advance(1000);
    const r = await reconcile(contextOf(f));
    expect(r.adopted).toHaveLength(6);
    expect(r.unknown).toHaveLength(3);
    // Each charge is an order of its own: two extra charges, two orders of three pulls.
    const extras = [1, 2].map((n) => f.ledger.orderForIntent(`${intent.key}-x${n}`));
    for (const extra of extras) expect(extra).toMatchObject({ quantity: 3, totalChargedCents: 3000 });
    expect(f.ledger.getIntent(`${intent.key}-x3`)).toBeUndefined();
    const sell = new SellSide({ ...contextOf(f), batchSize: 10 });
    await sell.process();
    for (const extra of extras)
      for (const p of f.ledger.pullsOfOrder(extra!.checkoutId))
        expect(['sold', 'listed']).toContain(f.ledger.getPull(p.pullId)?.status);
    const gauge = await f.metrics.registry.getSingleMetricAsString('packbot_vault_unknown_cards');
    expect(gauge).toMatch(/packbot_vault_unknown_cards 3\b/);
  });

  it('a sell-back whose answer was lost is re-sent and counted, never written off as gone', async () => {
    const f = fixture();
    let lose = true;
    const api: PartnerApi = {
      ...f.api,
      sellBack: async (items) => {
        const r = await f.api.sellBack(items);
        if (lose) {
          lose = false;
          throw new TransportError('reset', 'connection reset after the sale', 'POST /cards/sell-back');
        }
        return r;
      },
    };
    const ctx = contextOf(f, api);
    const ex = executorOf(f, { api });
    const out = await ex.open({
      body: BODY,
    });
    if (out.status !== 'confirmed') throw new Error('purchase failed');
    const sell = new SellSide({ ...ctx, batchSize: 10 });
    await sell.process().catch(() => undefined);
    const pending = f.ledger.pullsAwaitingSale('main');
    expect(pending.length).toBeGreaterThan(0);
    await f.clock.advance(1000);
    const r = await reconcile(ctx);
    expect(r.missing).toEqual([]);
    await sell.process();
    expect(f.ledger.pullsAwaitingSale('main')).toEqual([]);
    const paid = f.market
      .ledger()
      .filter((e) => e.kind === 'sell_back')
      .reduce((n, e) => n + e.amountCents, 0);
    const counted = pending.reduce((n, p) => n + (f.ledger.saleOf(p.pullId)?.payoutCents ?? 0), 0);
    expect(counted).toBe(paid);
    expect(counted).toBeGreaterThan(0);
  });

  it("leaves the owner's cards alone unless the config opts in; then trades them at zero cost", async () => {
    const f = fixture();
    await f.api.purchasePacks(
      { pack_type: 'lucky', category: 'pokemon', quantity: 3, risk_level: 'standard' },
      'owner-in-the-app',
    );
    await f.clock.advance(1000);
    const alone = await reconcile(contextOf(f));
    expect(alone.unknown).toHaveLength(3);
    expect(f.ledger.holdings('main')).toEqual([]);
    const taken = await reconcile({ ...contextOf(f), adoptUnknownCards: true });
    expect(taken.adopted).toHaveLength(3);
    expect(taken.unknown).toEqual([]);
    expect(f.ledger.orderForIntent('foreign_main_pokemon')).toMatchObject({
      quantity: 0,
      totalChargedCents: 0,
    });
    await new SellSide({ ...contextOf(f), batchSize: 10 }).process();
    for (const p of f.ledger.pullsOfOrder('foreign:main:pokemon'))
      expect(['sold', 'listed']).toContain(f.ledger.getPull(p.pullId)?.status);
  });

  it('gives late pulls to the attempt that has room for them, not to the next order in the window', async () => {
    const f = fixture({ world: testWorld({ rules: { min_seconds_between_purchases: 0 } }) });
    // A timed out and was judged not charged too early; the service ran it a moment later.
    const a = sentIntent(f, 'pb_main_lateA000');
    f.ledger.markInDoubt(a.key, 'TRANSPORT_TIMEOUT');
    f.ledger.failIntent(a.key, 'NOT_CHARGED', 'too early', undefined, 'evidence: too early');
    await f.clock.advance(100);
    // B, sent next, was settled by evidence with its own three pulls.
    const b = await settledByItsPulls(f, 'pb_main_nextB000');
    await f.clock.advance(400);
    const aAnswer = await f.api.purchasePacks(BODY, 'service-side-A');
    await f.clock.advance(2000);
    const r = await reconcile(contextOf(f));
    expect(r.adopted.sort()).toEqual(aAnswer.pulls.map((p) => p.pull_id).sort());
    expect(f.ledger.getIntent(a.key)?.state).toBe('confirmed');
    expect(f.ledger.pullsOfOrder(`settled:${a.key}`)).toHaveLength(3);
    expect(f.ledger.getIntent(`${b.key}-x1`)).toBeUndefined();
  });

  it('leaves an order in doubt its own cards, and never books a second charge of a single send', async () => {
    const f = fixture({ world: testWorld({ rules: { min_seconds_between_purchases: 0 } }) });
    // Y: sent once, its answer lost, settled by its three pulls.
    const y = await settledByItsPulls(f, 'pb_main_settledY');
    // X, sent 5 s later inside Y's window, is in doubt: its cards are in the vault.
    await f.clock.advance(5000);
    const x = sentIntent(f, 'pb_main_doubtX00');
    await f.api.purchasePacks(BODY, 'service-side-X');
    f.ledger.markInDoubt(x.key, 'TRANSPORT_RESET');
    await f.clock.advance(1000);
    const r = await reconcile(contextOf(f));
    expect(r.adopted).toEqual([]);
    expect(f.ledger.getIntent(`${y.key}-x1`)).toBeUndefined();
    // The resolver then settles X from those very cards.
    const ex = executorOf(f);
    const resolved = await new InDoubtResolver({ ...contextOf(f), executor: ex, recheckMs: 60_000 }).resolve(
      f.ledger.getIntent(x.key)!,
    );
    expect(resolved.status).toBe('confirmed');
    expect(f.ledger.pullsOfOrder(`settled:${x.key}`)).toHaveLength(3);
  });

  it('gives stray pack pulls to a pack order, never to a card purchase in the same window', async () => {
    const f = fixture({ world: testWorld({ rules: { min_seconds_between_purchases: 0 } }) });
    // A card purchase that may have reached the service (a 500 re-sent), closed as not charged.
    const card = f.ledger.recordIntent({
      key: 'pb_main_cardC000',
      account: 'main',
      operation: 'card',
      body: { card_id: 'shop-card', max_price: 80 },
      unitPriceCents: 8000,
    });
    f.ledger.markIntentSent(card.key);
    f.ledger.markInDoubt(card.key, 'SERVER_ERROR');
    f.ledger.markIntentSent(card.key);
    f.ledger.failIntent(card.key, 'NOT_CHARGED', 'not in the vault', undefined, 'evidence: not in the vault');
    await f.clock.advance(100);
    // A pack order sent once and confirmed, then a second copy of it run under a forgotten key.
    const ex = executorOf(f);
    const pack = sentIntent(f, 'pb_main_packP000');
    f.ledger.markInDoubt(pack.key, 'TRANSPORT_RESET');
    expect((await ex.send(f.ledger.getIntent(pack.key)!)).status).toBe('confirmed');
    await f.clock.advance(500);
    await f.api.purchasePacks(BODY, 'forgotten-copy-P');
    await f.clock.advance(1000);
    const r = await reconcile(contextOf(f));
    expect(r.adopted).toHaveLength(3);
    expect(f.ledger.getIntent(card.key)?.state).toBe('failed');
    expect(f.ledger.orderForIntent(card.key)).toBeUndefined();
    expect(f.ledger.orderForIntent(`${pack.key}-x1`)).toMatchObject({ quantity: 3, totalChargedCents: 3000 });
  });

  describe('reads before it takes the sell side', () => {
    /**
     * The fixture's API with one read held after its answer came (`read` resolves then): the
     * reconciliation has what the service said, and waits to go on until `release`.
     */
    function heldRead(f: Fixture, method: 'getVault' | 'getAccount') {
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      let read!: () => void;
      const reading = new Promise<void>((r) => {
        read = r;
      });
      let held = false;
      const api = new Proxy(f.api, {
        get(target, key) {
          const value = Reflect.get(target, key, target);
          if (typeof value !== 'function') return value;
          if (key !== method || held) return value.bind(target);
          return async (...args: unknown[]) => {
            held = true;
            const answer = await value.apply(target, args);
            read();
            await gate;
            return answer;
          };
        },
      }) as PartnerApi;
      return { api, reading, release };
    }

    /** Whether `p` settles within `turns` turns of the event loop (a pass kept waiting never does). */
    async function settles(p: Promise<unknown>, turns = 200): Promise<boolean> {
      let done = false;
      void p.then(() => {
        done = true;
      });
      for (let i = 0; i < turns && !done; i++) await new Promise<void>((r) => setImmediate(r));
      return done;
    }

    /**
     * After an order traded (`buyAndSettle`): its sell side, an executor for more orders, and
     * `start`, a reconciliation taking that sell side's lock whose `method` read is held.
     */
    async function heldReconciliation(method: 'getVault' | 'getAccount') {
      const f = fixture();
      const sell = await buyAndSettle(f, 1);
      const ex = executorOf(f);
      const held = heldRead(f, method);
      const start = () => reconcile(contextOf(f, held.api), (fn) => sell.exclusive(fn));
      return { f, sell, ex, held, start };
    }

    it('a sell pass goes through while a read of the reconciliation waits', async () => {
      const { f, sell, ex, held, start } = await heldReconciliation('getAccount');
      const done = start();
      await held.reading;
      // Pulls whose sell-back window is running: their pass must not queue behind the read.
      expect((await ex.open({ body: BODY })).status).toBe('confirmed');
      expect(await settles(sell.process())).toBe(true);
      expect(f.ledger.undecidedPulls('main')).toEqual([]);
      held.release();
      expect((await done).missing).toEqual([]);
    });

    it("a balance the ledger learns during the read stays the ledger's, and is no drift", async () => {
      const { f, ex, held, start } = await heldReconciliation('getAccount');
      const done = start();
      await held.reading;
      // An order answered after the account was read: its balance is newer than the read's.
      expect((await ex.open({ body: BODY })).status).toBe('confirmed');
      const newer = f.ledger.latestBalance('main')!;
      held.release();
      const r = await done;
      expect(r.balanceDriftCents).toBe(0);
      expect(f.ledger.latestBalance('main')).toEqual(newer);
      expect(f.sink.messages()).not.toContain('balance differs from the ledger');
      // The next pass compares again, with nothing between its read and the ledger.
      await f.clock.advance(1000);
      expect((await reconcile(contextOf(f))).balanceDriftCents).toBe(0);
      expect(f.ledger.latestBalance('main')?.source).toBe('reconcile');
    });

    it('a listing made while the vault was read is judged by the next pass, not taken for gone', async () => {
      const { f, sell, ex, held, start } = await heldReconciliation('getVault');
      expect((await ex.open({ body: BODY })).status).toBe('confirmed');
      const before = new Set(f.ledger.activeListings('main').map((l) => l.listingId));
      const done = start();
      await held.reading;
      // The new pulls are listed after the vault page was read: it shows their cards unlisted.
      await sell.process();
      const made = f.ledger.activeListings('main').filter((l) => !before.has(l.listingId));
      expect(made.length).toBeGreaterThan(0);
      held.release();
      const r = await done;
      expect(r.listings.drift).toBe(0);
      expect(f.ledger.activeListings('main').map((l) => l.listingId)).toEqual(
        expect.arrayContaining(made.map((l) => l.listingId)),
      );
      await f.clock.advance(1000);
      expect((await reconcile(contextOf(f))).listings.drift).toBe(0);
    });
  });
});
