/**
 * Orders in doubt in a world we did not write: a service that forgets idempotency keys, a key that
 * lost its scope while an order was in doubt. Whatever happens, the simulator's charges equal the
 * ledger's orders, no card of ours is left unsold, and spend stays within the caps.
 */
import { describe, expect, it } from 'vitest';
import { ForbiddenError, TransportError } from '../../src/api/errors.js';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { judge } from '../../src/bot/doubt/evidence.js';
import { InDoubtResolver, USER_ID_FACT } from '../../src/bot/doubt/in-doubt.js';
import { HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import type { Market } from '../../src/market/market.js';
import type { Intent, Ledger } from '../../src/store/ledger.js';
import { strategy } from '../strategy-builder.js';
import {
  contextOf,
  driveUntil,
  executorOf,
  type Fixture,
  fixture,
  START,
  TrackingClock,
  testBot,
  testWorld,
} from './helpers.js';

const BODY = { pack_type: 'lucky', category: 'pokemon', quantity: 3, risk_level: 'standard' } as const;

/**
 * A service that forgets keys: the first request of each key commits and its answer is lost; a
 * re-send of that key is run as a brand-new order (under a fresh key), as a broken server would.
 */
function forgetful(api: PartnerApi) {
  const seen = new Map<string, number>();
  const wrapped: PartnerApi = {
    ...api,
    purchasePacks: async (body, key) => {
      const n = seen.get(key) ?? 0;
      seen.set(key, n + 1);
      if (n > 0) return api.purchasePacks(body, `${key}-forgot${n}`);
      await api.purchasePacks(body, key);
      throw new TransportError('reset', 'connection reset after the order committed', 'POST /packs/purchase');
    },
  };
  return { api: wrapped, seen };
}

/** The simulator's books for the test account against the ledger's. */
function audit(market: Market, ledger: Ledger) {
  const entries = market.ledger().filter((e) => e.accountId === 'acct_t');
  const refunded = new Set(entries.filter((e) => e.kind === 'pack_refund').map((e) => e.ref));
  const charges = entries.filter((e) => e.kind === 'pack_purchase' && !refunded.has(e.ref));
  const data = ledger.reportData(0, Number.MAX_SAFE_INTEGER);
  return {
    charges: charges.length,
    chargedCents: -charges.reduce((n, e) => n + e.amountCents, 0),
    orders: data.orders.length,
    bookedCents: data.orders.reduce((n, o) => n + o.totalChargedCents, 0),
  };
}

async function vaultCards(f: Fixture) {
  return (await f.api.getVault({ category: 'pokemon', per_page: 200 })).cards;
}

function botOver(f: Fixture, api: PartnerApi, clock: TrackingClock) {
  return testBot(f, { api, clock });
}

describe('a service that forgets idempotency keys', () => {
  for (const minSeconds of [60, 0]) {
    it(`never charges twice nor strands a pull (min ${minSeconds} s between purchases)`, async () => {
      const virtual = new VirtualClock(START);
      const clock = new TrackingClock(virtual);
      const s = strategy(
        {
          budget: {
            max_daily_spend_usd: 150,
            max_total_spend_usd: 1_000_000,
            min_balance_usd: 0,
            stop_loss_usd: 1_000_000,
          },
        },
        { base: 'bot' },
      );
      const f = fixture({
        clock: virtual,
        strategy: s,
        world: testWorld({ rules: { min_seconds_between_purchases: minSeconds, max_packs_per_day: 1000 } }),
      });
      const { api, seen } = forgetful(f.api);
      const bot = botOver(f, api, clock);
      await bot.start();
      await driveUntil(clock, START + 2 * HOUR_MS, 3);
      await bot.stop();

      const a = audit(f.market, f.ledger);
      expect(a.charges).toBeGreaterThan(0);
      // No key was ever re-sent: each order was settled by the pulls it left in the vault.
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
      expect(a.orders).toBe(a.charges);
      expect(a.bookedCents).toBe(a.chargedCents);
      // Spend within the daily cap (150 USD = 15 packs of 10).
      expect(a.chargedCents).toBeLessThanOrEqual(15_000);
      // Every card in the vault is one of ours and settled: listed, never left unsold.
      for (const c of await vaultCards(f)) {
        const pull = f.ledger.getPull(c.pull_id!);
        expect(pull?.status).toBe('listed');
      }
      expect(f.ledger.unresolvedCount()).toBe(0);
      expect(f.market.audit()).toEqual([]);
    });
  }
});

describe('an order in doubt when the key cannot be used', () => {
  /** An order whose answer was lost; the ledger has it `in_doubt`. */
  async function lostAnswer(f: Fixture) {
    const { api } = forgetful(f.api);
    const ex = executorOf(f, { api });
    const out = await ex.open({ body: BODY, unitPriceCents: 1000 });
    expect(out.status).toBe('in_doubt');
    return out.intent;
  }
  const denied = (api: PartnerApi, what: (keyof PartnerApi)[]): PartnerApi => {
    const out = { ...api };
    for (const name of what)
      (out as Record<string, unknown>)[name] = async () => {
        throw new ForbiddenError('key lacks scope', name);
      };
    return out;
  };

  it('a 403 on re-send never closes it as not charged; the vault settles it', async () => {
    const f = fixture();
    const intent = await lostAnswer(f);
    const api = denied(f.api, ['purchasePacks']);
    const ex = executorOf(f, { api });
    // A direct re-send: refused, stays in doubt, and the key is never re-sent blind again.
    const resent = await ex.send(f.ledger.getIntent(intent.key)!);
    expect(resent.status).toBe('in_doubt');
    expect(f.ledger.getIntent(intent.key)).toMatchObject({ state: 'in_doubt', keyForgotten: true });
    const resolver = new InDoubtResolver({ ...contextOf(f, api), executor: ex, recheckMs: 60_000 });
    const r = await resolver.resolve(f.ledger.getIntent(intent.key)!);
    expect(r.status).toBe('confirmed');
    expect(f.ledger.pullsOfOrder(`settled:${intent.key}`)).toHaveLength(3);
    expect(audit(f.market, f.ledger)).toMatchObject({ charges: 1, orders: 1, bookedCents: 3000 });
  });

  it('parks what no evidence can settle, reads it again on a backoff, never re-sends it', async () => {
    const f = fixture();
    const intent = await lostAnswer(f);
    let sends = 0;
    const blind = denied(f.api, ['getVault', 'getAccount', 'getPurchaseReport']);
    blind.purchasePacks = async (body, key) => {
      sends++;
      return f.api.purchasePacks(body, key);
    };
    const ex = executorOf(f, { api: blind });
    const resolver = new InDoubtResolver({ ...contextOf(f, blind), executor: ex, recheckMs: 60_000 });
    // Unreadable evidence while the order may still run: it waits for the order's end, unparked.
    const early = await resolver.resolve(f.ledger.getIntent(intent.key)!);
    expect(early).toMatchObject({ status: 'in_doubt', parked: false });
    if (early.status !== 'in_doubt') throw new Error('settled');
    expect(early.until).toBeGreaterThan(f.clock.now());
    // Past the settle time it is parked, and read again on a doubling backoff; nothing is sent.
    await f.clock.advance(early.until - f.clock.now());
    const gaps: number[] = [];
    for (let n = 0; n < 6; n++) {
      const r = await resolver.resolve(f.ledger.getIntent(intent.key)!);
      expect(r).toMatchObject({ status: 'in_doubt', parked: true, why: 'the evidence could not be read' });
      if (r.status !== 'in_doubt') throw new Error('settled');
      gaps.push(r.until - f.clock.now());
      await f.clock.advance(r.until - f.clock.now());
    }
    expect(gaps).toEqual([60_000, 120_000, 240_000, 480_000, 600_000, 600_000]);
    expect(sends).toBe(0);
    expect(f.ledger.getIntent(intent.key)?.parkedAt).not.toBeNull();
    expect(f.ledger.unresolvedCount()).toBe(1);
    // The bot with the same ledger opens nothing while it is parked, and says why.
    const virtual = f.clock;
    const clock = new TrackingClock(virtual);
    const blocked = botOver(f, blind, clock);
    expect(await blocked.openOnce()).toBeGreaterThan(virtual.now());
    expect(blocked.lastWait).toMatch(/in doubt \(parked for review\): the evidence could not be read/);
    expect(sends).toBe(0);
    // Restart with a key that reads: the vault shows the order's pulls.
    const good = executorOf(f);
    const fixed = new InDoubtResolver({ ...contextOf(f), executor: good, recheckMs: 60_000 });
    expect((await fixed.resolve(f.ledger.getIntent(intent.key)!)).status).toBe('confirmed');
    expect(f.ledger.unresolvedCount()).toBe(0);
    expect(audit(f.market, f.ledger)).toMatchObject({ charges: 1, orders: 1 });
  });
});

/**
 * The path of chaos seed 3 (`npm run chaos -- --kills 100 --seed 3`, before the fix): the bot was
 * killed with a pack order and a card order both on the wire. At the next start both were in doubt;
 * the pack order's evidence (its three pulls in the vault) was set aside because "another order"
 * was in doubt — the card order, which can leave no pull, pack count or report row — so its key was
 * re-sent, twice, to a proxy that ran each re-send as a new order: three charges for one order.
 */
describe('a pack order in doubt beside a card order in doubt (chaos seed 3)', () => {
  it('is settled by its pulls, never re-sent, and charged once', async () => {
    const f = fixture();
    const sent = new Map<string, number>();
    // The service forgets keys and the answers are lost: every send of a key charges.
    const lossy: PartnerApi = {
      ...f.api,
      purchasePacks: async (body, key) => {
        const n = sent.get(key) ?? 0;
        sent.set(key, n + 1);
        await f.api.purchasePacks(body, n === 0 ? key : `${key}-forgot${n}`);
        throw new TransportError(
          'reset',
          'connection reset after the order committed',
          'POST /packs/purchase',
        );
      },
      // The card order dies before it reaches the service: nothing is charged for it.
      purchaseCard: async () => {
        throw new TransportError(
          'reset',
          'connection reset before the request was read',
          'POST /cards/purchase',
        );
      },
    };
    const ex = executorOf(f, { api: lossy });
    const pack = await ex.open({ body: BODY, unitPriceCents: 1000 });
    const card = await ex.buyCard({ body: { card_id: 'card_x', max_price: 50 }, maxPriceCents: 5000 });
    expect([pack.status, card.status]).toEqual(['in_doubt', 'in_doubt']);
    // Both orders in doubt count at their worst case against the caps until they settle.
    const virtual = f.clock;
    const clock = new TrackingClock(virtual);
    const bot = botOver(f, lossy, clock);
    expect(bot.snapshot().totals.inDoubtCents).toBe(3000 + 5100);

    // The open loop settles each in turn (the older first, keys break the tie): the pack order by
    // its pulls with no send, the card order once it must have ended and its card is not ours.
    for (let n = 0; n < 3 && f.ledger.unresolvedCount() > 0; n++) {
      await bot.openOnce();
      expect(sent.get(pack.intent.key)).toBe(1);
      await virtual.advance(60_000);
    }
    expect(f.ledger.getIntent(pack.intent.key)).toMatchObject({ state: 'confirmed', attempts: 1 });
    expect(f.ledger.pullsOfOrder(`settled:${pack.intent.key}`)).toHaveLength(3);
    expect(f.ledger.getIntent(card.intent.key)?.state).toBe('failed');
    expect(f.ledger.unresolvedCount()).toBe(0);
    expect(bot.snapshot().totals.inDoubtCents).toBe(0);
    expect(audit(f.market, f.ledger)).toEqual({
      charges: 1,
      chargedCents: 3000,
      orders: 1,
      bookedCents: 3000,
    });
  });

  it('two pack orders in doubt together are parked, never re-sent', async () => {
    const f = fixture({
      world: testWorld({ rules: { min_seconds_between_purchases: 0, max_packs_per_day: 1000 } }),
    });
    const sent = new Map<string, number>();
    const lossy: PartnerApi = {
      ...f.api,
      purchasePacks: async (body, key) => {
        sent.set(key, (sent.get(key) ?? 0) + 1);
        await f.api.purchasePacks(body, key);
        throw new TransportError(
          'reset',
          'connection reset after the order committed',
          'POST /packs/purchase',
        );
      },
    };
    const ex = executorOf(f, { api: lossy });
    const a = await ex.open({ body: BODY, unitPriceCents: 1000 });
    const b = await ex.open({ body: BODY, unitPriceCents: 1000 });
    await f.clock.advance(2 * 60_000);
    const resolver = new InDoubtResolver({ ...contextOf(f, lossy), executor: ex, recheckMs: 60_000 });
    for (const i of [a.intent, b.intent]) {
      const r = await resolver.resolve(f.ledger.getIntent(i.key)!);
      expect(r).toMatchObject({
        status: 'in_doubt',
        parked: true,
        why: '1 other order(s) in doubt share its window',
      });
    }
    expect([...sent.values()]).toEqual([1, 1]);
    expect(f.ledger.unresolvedIntents('main').map((i) => i.parkedAt !== null)).toEqual([true, true]);
    expect(audit(f.market, f.ledger)).toMatchObject({ charges: 2, orders: 0 });
  });
});

describe('the purchase report as evidence', () => {
  it("learns the account's report id from a confirmed order and settles by its row", async () => {
    const f = fixture();
    const ex = executorOf(f);
    const resolver = new InDoubtResolver({ ...contextOf(f), executor: ex, recheckMs: 60_000 });
    const first = await ex.open({ body: BODY, unitPriceCents: 1000 });
    if (first.status !== 'confirmed') throw new Error('purchase failed');
    await f.clock.advance(1000);
    await resolver.learnUserId(first.intent, first.confirmed.order.totalChargedCents, 'lucky');
    expect(f.ledger.accountFact('main', USER_ID_FACT)).toMatch(/./);
    // The next order's answer is lost, and its cards are gone from the vault (the owner shipped
    // them in the app) while the account cannot be read: only the report can say it was charged.
    await f.clock.advance(60_000);
    const { api } = forgetful(f.api);
    const lost = await executorOf(f, { api }).open({
      body: BODY,
      unitPriceCents: 1000,
    });
    expect(lost.status).toBe('in_doubt');
    const blind: PartnerApi = {
      ...f.api,
      getVault: async (q) => ({ ...(await f.api.getVault(q)), cards: [], total: 0 }),
      getAccount: async () => {
        throw new ForbiddenError('no', 'GET /account');
      },
    };
    await f.clock.advance(1000);
    const r = await new InDoubtResolver({ ...contextOf(f, blind), executor: ex, recheckMs: 60_000 }).resolve(
      f.ledger.getIntent(lost.intent.key)!,
    );
    expect(r.status).toBe('confirmed');
    expect(f.ledger.getIntent(lost.intent.key)?.settledBy).toBe(
      'evidence: purchase report row of this account',
    );
    expect(audit(f.market, f.ledger)).toMatchObject({ charges: 2, orders: 2, bookedCents: 6000 });
  });
});

describe('judge: what evidence settles', () => {
  const O = { settleMs: 60_000, skewMs: 60_000, resendHorizonMs: HOUR_MS };
  const T = START;
  const intent = (over: Partial<Intent> = {}): Intent => ({
    key: 'pb_main_x',
    account: 'main',
    operation: 'pack',
    bodyJson: JSON.stringify(BODY),
    body: { ...BODY },
    state: 'in_doubt',
    attempts: 1,
    errorCode: null,
    errorMessage: null,
    responseJson: null,
    expectedValueCents: null,
    stdevCents: null,
    createdAt: T,
    updatedAt: T,
    firstSentAt: T,
    lastSentAt: T,
    lastAnswerAt: T + 1000,
    unitPriceCents: 1000,
    delivered: true,
    keyForgotten: false,
    parkedAt: null,
    settledBy: null,
    ...over,
  });
  const pull = { card_id: 'c', pull_id: 'p', pulled_at: new Date(T).toISOString() } as never;
  const day = (packsToday: number, ledgerPacksToday = 6) => ({
    packsToday,
    ledgerPacksToday,
    dayStart: T - 8 * HOUR_MS,
  });
  const rows: [string, Intent, Parameters<typeof judge>[1], number, string][] = [
    [
      'all its pulls in the vault',
      intent(),
      { unknownPulls: [pull, pull, pull], otherUnresolved: 0 },
      T,
      'charged',
    ],
    [
      'some pulls and the day count',
      intent(),
      { unknownPulls: [pull], account: day(9), otherUnresolved: 0 },
      T,
      'charged',
    ],
    [
      'its report row',
      intent(),
      { unknownPulls: [], report: { unexplainedCents: 3000 }, otherUnresolved: 0 },
      T,
      'charged',
    ],
    [
      'nothing yet, may still run',
      intent(),
      { unknownPulls: [], account: day(6), otherUnresolved: 0 },
      T,
      'wait',
    ],
    [
      'nothing, settled, day count unchanged',
      intent(),
      { unknownPulls: [], account: day(6), otherUnresolved: 0 },
      T + 120_000,
      'not_charged',
    ],
    [
      'nothing, but the day count moved (the owner opened packs)',
      intent(),
      { unknownPulls: [], account: day(8), otherUnresolved: 0 },
      T + 120_000,
      'park',
    ],
    [
      'another order in doubt: its pulls could be ours',
      intent(),
      { unknownPulls: [pull, pull, pull], account: day(6), otherUnresolved: 1 },
      T + 120_000,
      'park',
    ],
    [
      'a key the service forgot is never re-sent',
      intent({ keyForgotten: true }),
      { unknownPulls: [], account: day(8), otherUnresolved: 0 },
      T + 120_000,
      'park',
    ],
    [
      'past the horizon',
      intent(),
      { unknownPulls: [], account: day(8), otherUnresolved: 0 },
      T + 2 * HOUR_MS,
      'park',
    ],
    [
      'sent before the service day began: the count cannot tell',
      intent({ firstSentAt: T - 9 * HOUR_MS, lastSentAt: T - 9 * HOUR_MS }),
      { unknownPulls: [], account: day(6), otherUnresolved: 0 },
      T,
      'park',
    ],
  ];
  it.each(rows)('%s', (_label, i, evidence, now, kind) => {
    expect(judge(i, evidence, now, O).kind).toBe(kind);
  });
});
