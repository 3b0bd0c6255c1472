/**
 * The budget's running totals follow the ledger whatever booked an order (an answer, evidence, an
 * adopted extra charge), and count every order not settled yet at its worst case, so the next
 * decision never spends past a cap on what it has not seen.
 */
import { describe, expect, it } from 'vitest';
import { LATE_RATE } from '../../src/api/rules.js';
import { BudgetTracker } from '../../src/bot/spending/budget-state.js';
import { applyRate } from '../../src/core/money.js';
import { Rng } from '../../src/core/prng.js';
import { markedPnlCents } from '../../src/strategy/budget.js';
import { decideOpen } from '../../src/strategy/decide-open.js';
import { sealedValueCents } from '../../src/strategy/pull-policy.js';
import { scorePool } from '../../src/strategy/score.js';
import { bookOrder, cardPull, packResponse, sealedPull } from '../store/fixtures.js';
import { strategy } from '../strategy-builder.js';
import { executorOf, fixture } from './helpers.js';

const BODY = { pack_type: 'lucky', category: 'pokemon', quantity: 3, risk_level: 'standard' } as const;

describe('BudgetTracker', () => {
  it('counts orders booked by any path, and open orders at their worst case', async () => {
    const s = strategy(
      {
        budget: {
          max_daily_spend_usd: 120,
          max_total_spend_usd: 1000,
          min_balance_usd: 0,
          stop_loss_usd: 1000,
        },
      },
      { base: 'bot' },
    );
    const f = fixture({ strategy: s });
    const tracker = new BudgetTracker(f.ledger, 'main', s);
    const ex = executorOf(f);
    const out = await ex.open({ body: BODY, unitPriceCents: 1000 });
    if (out.status !== 'confirmed') throw new Error('purchase failed');
    const now = f.clock.now();
    expect(tracker.totals(now)).toMatchObject({
      spentTodayCents: 3000,
      spentTotalCents: 3000,
      inDoubtCents: 0,
    });

    // An extra charge found by the reconciler (a service that ran a re-send as a new order).
    f.ledger.bookExtraCharge(out.intent.key, [], 'evidence: a second charge');
    expect(tracker.totals(now)).toMatchObject({ spentTodayCents: 6000, spentTotalCents: 6000 });

    // A card order recorded (not yet answered): its max_price and the fee count before it leaves.
    f.ledger.recordIntent({
      key: 'pb_main_card_open_1',
      account: 'main',
      operation: 'card',
      body: { card_id: 'c1', max_price: 42.5 },
      unitPriceCents: 4250,
    });
    const totals = tracker.totals(now);
    expect(totals.inDoubtCents).toBe(4350);

    // 120 USD a day: 60 spent, 43.50 open → 16.50 left: one pack of 10, not three.
    const pool = await f.api.getPackPool({ category: 'pokemon', pack_type: 'lucky', risk_level: 'standard' });
    const row = scorePool(pool, s);
    const account = { balanceCents: 1_000_000, killSwitch: false, packsLeftToday: 100 };
    const state = { ...account, ...totals, nextPurchaseAt: null, resetsAt: null, lastPurchaseAt: null };
    const decision = decideOpen(state, [{ ...row, decision: { action: 'open', quantity: 3 } }], s, now);
    expect(decision).toMatchObject({ action: 'open', quantity: 1 });
    // Without the open card order it would have opened all three.
    const blind = decideOpen(
      { ...state, inDoubtCents: 0 },
      [{ ...row, decision: { action: 'open', quantity: 3 } }],
      s,
      now,
    );
    expect(blind).toMatchObject({ action: 'open', quantity: 3 });
  });

  it("starts from every payout counted for its account, and no other account's", () => {
    const s = strategy({}, { base: 'bot' });
    const f = fixture({ strategy: s });
    const sale = (pull: string, payout: number, status: 'sold' | 'already_sold' | 'failed' = 'sold') =>
      ({ pull_id: pull, card_id: `card-${pull}`, status, payout_amount: payout }) as const;
    f.ledger.recordSellBack([sale('p1', 9), sale('p2', 4.5), sale('p3', 7, 'failed')], { account: 'main' });
    // A repeated answer for p1 is kept for the record, not counted twice.
    f.ledger.recordSellBack([sale('p1', 9, 'already_sold')], { account: 'main' });
    f.ledger.recordSellBack([sale('q1', 50)], { account: 'other' });
    const tracker = new BudgetTracker(f.ledger, 'main', s);
    expect(tracker.totals(f.clock.now()).markedPnlCents).toBe(1350);
  });

  it('marks every pull it owns once, however many share a kind, status and value (random books)', () => {
    const s = strategy({ sell: { sealed_value_fraction: 0.37 } }, { base: 'bot' });
    const f = fixture({ strategy: s });
    const rng = new Rng(1129);
    const values = [2.35, 3.1, 7.5, 12.34, 40];
    let spent = 0;
    for (let o = 0; o < 30; o++) {
      const pulls = Array.from({ length: 1 + rng.int(8) }, (_, i) => {
        const value = values[rng.int(values.length)]!;
        return rng.next() < 0.3
          ? sealedPull(`o${o}-${i}`, value)
          : cardPull(`o${o}-${i}`, value, '2026-01-01T12:05:00.000Z');
      });
      const charged = 5 + rng.int(20);
      spent += charged * 100;
      const booked = bookOrder(f.ledger, `key-owned-${o}`, packResponse(`co-${o}`, pulls, charged, 1000));
      for (const p of booked.pulls.filter((x) => x.kind === 'card')) {
        const r = rng.int(4);
        if (r === 0) f.ledger.recordDecision({ pullId: p.pullId, action: 'sell_back', reason: 'r' });
        if (r === 1)
          f.ledger.recordDecision({ pullId: p.pullId, action: 'list', reason: 'r', priceCents: 999 });
        if (r === 2) f.ledger.recordDecision({ pullId: p.pullId, action: 'hold', reason: 'r' });
      }
    }
    let held = 0;
    let listed = 0;
    let sealed = 0;
    for (const p of f.ledger.holdings('main'))
      if (p.kind === 'sealed_pack') sealed += sealedValueCents(p.valueCents, s);
      else if (p.status === 'list_pending' || p.status === 'listed')
        listed += applyRate(p.valueCents, LATE_RATE);
      else held += applyRate(p.valueCents, LATE_RATE);
    const tracker = new BudgetTracker(f.ledger, 'main', s);
    expect(f.ledger.ownedValues('main').some(([, , , n]) => n > 1)).toBe(true);
    expect(tracker.totals(f.clock.now()).markedPnlCents).toBe(markedPnlCents(-spent, held, listed, sealed));
  });
});
