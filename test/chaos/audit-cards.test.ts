/**
 * The chaos audit's card checks on an in-process simulator (fast, no CLI): a card sale booked from
 * its answer passes; one booked at its max_price (evidence without the answer) or not at all is a
 * problem, sale by sale.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AuditInput, audit } from '../../chaos/audit.js';
import { ACCOUNT, chaosWorld, FRESH_WINDOW_MS, KEY } from '../../chaos/setup.js';
import type { CardPurchaseResponse } from '../../src/api/schemas.js';
import { toCents } from '../../src/core/money.js';
import { Market } from '../../src/market/market.js';
import { SimClock } from '../../src/market/sim-clock.js';
import { parseWorld } from '../../src/market/world.js';
import type { Rules } from '../../src/market/world-schema.js';
import { boughtCardFromResponse, boughtCardPull } from '../../src/store/bought-card.js';
import { Ledger } from '../../src/store/ledger.js';
import { removeTempDirs, tempDir } from '../e2e/helpers.js';

afterEach(removeTempDirs);

async function world(server: Partial<Rules> = {}) {
  const clock = new SimClock();
  const market = new Market(parseWorld(chaosWorld(true, server)), { clock, seed: 4 });
  const api = market.api(KEY);
  const shop = await api.listShopCards({ category: 'pokemon', per_page: 10 });
  const buy = async (key: string, i: number) => {
    const card = shop.cards[i]!;
    const body = { card_id: card.id, max_price: Math.round(card.price * 150) / 100 };
    return { body, response: (await api.purchaseCard(body, key)) as CardPurchaseResponse };
  };
  const input = async (ledgerPath: string): Promise<AuditInput> => {
    const simEntries = market
      .ledger()
      .filter((e) => e.accountId === ACCOUNT)
      .map((e) => ({
        kind: e.kind,
        accountId: e.accountId,
        ref: e.ref,
        amountCents: e.amountCents,
        at: e.at,
      }));
    const cardSales = new Map(
      market
        .finishedOrders()
        .filter((o) => o.transaction_id !== undefined)
        .map((o) => [o.transaction_id!, { originalKey: o.key, cardId: o.card_id!, pullId: o.pull_id! }]),
    );
    const vault = api.getVault({ category: 'pokemon', per_page: 200 }).then((v) =>
      v.cards.map((c) => ({
        cardId: c.card_id,
        pullId: c.pull_id,
        listed: c.listed,
        kind: 'card',
        pulledAt: c.pulled_at === null ? null : Date.parse(c.pulled_at),
      })),
    );
    return {
      ledgerPath,
      kills: 0,
      simEntries,
      vault: await vault,
      modelProblems: market.audit(),
      seen: new Map(),
      cardSales,
      caps: { dailyCents: 10_000_000, totalCents: 10_000_000 },
      freshWindowMs: FRESH_WINDOW_MS,
      now: clock.now(),
    };
  };
  return { clock, buy, input };
}

describe('chaos audit: card sales', () => {
  it('passes sales booked from their answers; flags one booked at its max_price and one not booked', async () => {
    const { clock, buy, input } = await world();
    const ledger = Ledger.open(join(tempDir('packbot-chaos-cards-'), 'ledger.db'));
    const path = ledger.path;
    const intend = (key: string, body: { card_id: string; max_price: number }) => {
      ledger.recordIntent({
        key,
        account: 'main',
        operation: 'card',
        body,
        unitPriceCents: toCents(body.max_price),
      });
      ledger.markIntentSent(key);
    };
    // Booked from the answer: exact (a random key may end in `-x<digits>` like an extra charge).
    const a = await buy('chaos_card_key_a-x3', 0);
    intend('chaos_card_key_a-x3', a.body);
    ledger.confirmIntent('chaos_card_key_a-x3', a.response);
    ledger.recordDecision({ pullId: a.response.transaction_id, action: 'hold', reason: 'test' });
    let r = audit(await input(path));
    expect(r.problems).toEqual([]);
    expect(r).toMatchObject({ cardOrders: 1, charges: 1, doubleCharges: 0, moneyDiffCents: 0 });

    // Booked by evidence at its max_price: the price is the simulator's to the cent, or a problem.
    const b = await buy('chaos_card_key_b', 1);
    intend('chaos_card_key_b', b.body);
    const max = toCents(b.body.max_price);
    const bought = boughtCardFromResponse(b.response, clock.now());
    ledger.confirmBySettlement('chaos_card_key_b', {
      quantity: 1,
      totalChargedCents: max + 100,
      pulls: [boughtCardPull({ ...bought, priceCents: max })],
      by: 'test: the card is in the vault',
      card: { priceCents: max, feeCents: 100 },
    });
    ledger.recordDecision({ pullId: b.response.transaction_id, action: 'hold', reason: 'test' });
    // Charged, never booked: key unknown to the ledger's orders.
    const c = await buy('chaos_card_key_c', 2);
    r = audit(await input(path));
    ledger.close();
    const over = max - toCents(b.response.price);
    expect(over).toBeGreaterThan(0);
    expect(r.moneyDiffCents).toBe(toCents(c.response.total_charged) - over);
    expect(r.problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          `card sale ${b.response.transaction_id}: simulator $${b.response.price.toFixed(2)} + $1.00`,
        ),
        expect.stringContaining(`card sale ${c.response.transaction_id}`),
        expect.stringContaining('intent chaos_card_key_c: charged 1 time(s), 0 order(s) in the ledger'),
      ]),
    );
    expect(r.ok).toBe(false);
  });
});

describe('chaos audit: a bought card named otherwise in the vault (rules.purchased_card_pull_id)', () => {
  it.each(['checkout_id', 'opaque'] as const)(
    '%s: booked under the transaction id or the vault name, each sale counted once',
    async (naming) => {
      const { clock, buy, input } = await world({ purchased_card_pull_id: naming });
      const ledger = Ledger.open(join(tempDir('packbot-chaos-cards-'), 'ledger.db'));
      const intend = (key: string, body: { card_id: string; max_price: number }) => {
        ledger.recordIntent({
          key,
          account: 'main',
          operation: 'card',
          body,
          unitPriceCents: toCents(body.max_price),
        });
        ledger.markIntentSent(key);
      };
      // From its answer: the bot names the card by the transaction id.
      const a = await buy('chaos_card_key_a', 0);
      intend('chaos_card_key_a', a.body);
      ledger.confirmIntent('chaos_card_key_a', a.response);
      ledger.recordDecision({ pullId: a.response.transaction_id, action: 'hold', reason: 'test' });
      // By evidence: the bot names the card as the vault does, at the exact price.
      const b = await buy('chaos_card_key_b', 1);
      intend('chaos_card_key_b', b.body);
      const inVault = (await input(ledger.path)).vault.find((v) => v.cardId === b.response.card_id)!;
      expect(inVault.pullId).not.toBe(b.response.transaction_id);
      const price = toCents(b.response.price);
      ledger.confirmBySettlement('chaos_card_key_b', {
        quantity: 1,
        totalChargedCents: price + 100,
        pulls: [
          boughtCardPull({
            ...boughtCardFromResponse(b.response, clock.now()),
            transactionId: inVault.pullId!,
          }),
        ],
        by: 'test: the card is in the vault',
        card: { priceCents: price, feeCents: 100 },
      });
      ledger.recordDecision({ pullId: inVault.pullId!, action: 'hold', reason: 'test' });
      const r = audit(await input(ledger.path));
      ledger.close();
      expect(r.problems).toEqual([]);
      expect(r).toMatchObject({
        cardOrders: 2,
        charges: 2,
        doubleCharges: 0,
        lostPulls: 0,
        moneyDiffCents: 0,
      });
    },
  );
});
