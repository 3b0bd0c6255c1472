import { describe, expect, it } from 'vitest';
import { BadRequestError, TransportError } from '../../src/api/errors.js';
import type { PartnerApi } from '../../src/api/partner-api.js';
import type { PackPurchaseRequest } from '../../src/api/schemas.js';
import { DEFAULT_EVIDENCE_OPTIONS } from '../../src/bot/doubt/evidence.js';
import { InDoubtResolver } from '../../src/bot/doubt/in-doubt.js';
import type { CrashPoint } from '../../src/bot/spending/executor.js';
import { charges, contextOf, executorOf, fault, fixture } from './helpers.js';

const BODY: PackPurchaseRequest = {
  pack_type: 'lucky',
  category: 'pokemon',
  quantity: 2,
  risk_level: 'standard',
};

class Crash extends Error {}

describe('PurchaseExecutor', () => {
  it('has the intent, key and exact body in the ledger (state sent) before the request leaves', async () => {
    const f = fixture();
    const seen: { state: string | undefined; body: string | undefined }[] = [];
    const api: PartnerApi = {
      ...f.api,
      purchasePacks: async (body, key) => {
        const intent = f.ledger.getIntent(key);
        seen.push({ state: intent?.state, body: intent?.bodyJson });
        expect(JSON.stringify(body)).toBe(intent?.bodyJson);
        return f.api.purchasePacks(body, key);
      },
    };
    const ex = executorOf(f, { api });
    const out = await ex.open({ body: BODY });
    expect(seen).toEqual([{ state: 'sent', body: JSON.stringify(BODY) }]);
    expect(out.status).toBe('confirmed');
    if (out.status !== 'confirmed') return;
    expect(out.confirmed.pulls).toHaveLength(2);
    expect(f.ledger.getIntent(out.intent.key)?.state).toBe('confirmed');
    expect(charges(f.market).purchases).toBe(1);
  });

  it('marks a refunded or rate-limited order failed: nothing was charged', async () => {
    const f = fixture();
    f.market.setFaults({ 'POST /packs/purchase': fault({ error_rate: 1, times: 1 }) });
    const ex = executorOf(f);
    const refunded = await ex.open({ body: BODY });
    expect(refunded.status).toBe('failed');
    expect(refunded.intent.errorCode).toBe('ORDER_REFUNDED');
    const tooSoon = await ex.open({ body: BODY });
    expect(tooSoon.status).toBe('confirmed');
    const limited = await ex.open({ body: BODY });
    expect(limited.status).toBe('failed');
    expect(limited.intent.errorCode).toBe('RATE_LIMITED');
    await f.clock.advance(61_000);
    expect((await ex.open({ body: BODY })).status).toBe('confirmed');
    const c = charges(f.market);
    expect(c.purchases - c.refunds).toBe(2);
  });

  it('an answer lost in transport leaves the order in doubt; re-sending replays it without a second charge', async () => {
    const f = fixture();
    let drop = true;
    const api: PartnerApi = {
      ...f.api,
      purchasePacks: async (body, key) => {
        const r = await f.api.purchasePacks(body, key);
        if (drop) {
          drop = false;
          throw new TransportError(
            'reset',
            'connection reset after the order committed',
            'POST /packs/purchase',
          );
        }
        return r;
      },
    };
    const ex = executorOf(f, { api });
    const first = await ex.open({ body: BODY });
    expect(first.status).toBe('in_doubt');
    const again = await ex.send(first.intent);
    expect(again.status).toBe('confirmed');
    if (again.status !== 'confirmed') return;
    expect(again.response.idempotent_replay).toBe(true);
    expect(again.confirmed.recorded).toBe(true);
    expect(charges(f.market).purchases).toBe(1);
    expect(f.ledger.pullsOfOrder(again.response.checkout_id)).toHaveLength(2);
  });
});

describe("logging a handled fault: warn, with the order's idempotency key", () => {
  // The key goes under `intent`: the logger redacts any field named `key` (src/obs/logger.ts).
  const lines = (f: ReturnType<typeof fixture>) =>
    f.sink.lines.map((l) => JSON.parse(l) as { level: number; msg: string; intent?: string });

  it.each([
    ['an answer lost in transport: outcome unknown', 'order outcome unknown'],
    ['a re-send refused as a new order would be', 're-sent order refused'],
  ])('%s', async (_name, msg) => {
    const f = fixture();
    let sends = 0;
    const api: PartnerApi = {
      ...f.api,
      purchasePacks: async (body, key) => {
        sends++;
        if (sends === 1) {
          await f.api.purchasePacks(body, key);
          throw new TransportError(
            'reset',
            'connection reset after the order committed',
            'POST /packs/purchase',
          );
        }
        throw new BadRequestError('unknown order', 400, 'POST /packs/purchase');
      },
    };
    const ex = executorOf(f, { api });
    const first = await ex.open({ body: BODY });
    expect(first.status).toBe('in_doubt');
    if (msg.startsWith('re-sent')) expect((await ex.send(first.intent)).status).toBe('in_doubt');
    const line = lines(f).find((l) => l.msg.startsWith(msg));
    expect(line).toMatchObject({ level: 40, intent: first.intent.key });
    expect(line?.intent).toMatch(/^pb_main_/);
    // Nothing at error or above: the evidence settles it; a parked order is the operator's error.
    expect(lines(f).filter((l) => l.level >= 50)).toEqual([]);
  });
});

describe('crash recovery: a process killed at any instant never pays twice nor loses a pull', () => {
  const points: (CrashPoint | 'in_flight')[] = ['after_intent', 'before_send', 'in_flight', 'after_answer'];
  for (const point of points) {
    it(`killed ${point}`, async () => {
      const f = fixture();
      const crashAt = (p: CrashPoint) => {
        if (p === point) throw new Crash(p);
      };
      // in_flight: the service processed the request, the process died before reading the answer.
      const api: PartnerApi =
        point === 'in_flight'
          ? {
              ...f.api,
              purchasePacks: async (b, k) => {
                await f.api.purchasePacks(b, k);
                throw new Crash('in flight');
              },
            }
          : f.api;
      const dying = executorOf(f, { api, crashAt });
      await expect(dying.open({ body: BODY, unitPriceCents: 1000 })).rejects.toBeInstanceOf(Crash);

      // Restart: a fresh executor over the same ledger and the same service.
      const restarted = executorOf(f);
      const resolver = new InDoubtResolver({ ...contextOf(f), executor: restarted, recheckMs: 60_000 });
      const settle = async () => {
        const out = [];
        for (const intent of restarted.recoverInterrupted()) out.push(await resolver.resolve(intent));
        return out;
      };
      let outcomes = await settle();
      if (point === 'after_intent') {
        // Never left: dropped, nothing charged.
        expect(outcomes).toHaveLength(0);
        expect(charges(f.market).purchases).toBe(0);
        expect(f.ledger.unresolvedCount()).toBe(0);
        return;
      }
      if (point === 'before_send') {
        // Marked sent, never left: nothing in the vault, but it might still be running. Once it
        // cannot be, the account's pack count and the empty vault say it was not charged.
        expect(outcomes.map((o) => o.status)).toEqual(['in_doubt']);
        await f.clock.advance(DEFAULT_EVIDENCE_OPTIONS.settleMs);
        outcomes = await settle();
        expect(outcomes.map((o) => o.status)).toEqual(['failed']);
        expect(f.ledger.unresolvedCount()).toBe(0);
        expect(charges(f.market).purchases).toBe(0);
        return;
      }
      expect(f.ledger.unresolvedCount()).toBe(0);
      expect(charges(f.market).purchases).toBe(1);
      expect(outcomes.map((o) => o.status)).toEqual(['confirmed']);
      // Every pull of the one order the service charged is in the ledger, once.
      const vault = await f.api.getVault({ category: 'pokemon' });
      const booked = f.ledger.reportData(0, Number.MAX_SAFE_INTEGER);
      expect(booked.orders).toHaveLength(1);
      expect(booked.orders[0]!.totalChargedCents).toBe(2000);
      expect(vault.cards.map((c) => c.pull_id).sort()).toEqual(booked.pulls.map((p) => p.pullId).sort());
      // And a second restart changes nothing.
      expect(await settle()).toEqual([]);
      expect(charges(f.market).purchases).toBe(1);
    });
  }
});
