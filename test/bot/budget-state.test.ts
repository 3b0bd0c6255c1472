/**
 * The budget's running totals follow the ledger whatever booked an order (an answer, evidence, an
 * adopted extra charge), and count every order not settled yet at its worst case, so the next
 * decision never spends past a cap on what it has not seen.
 */
import { describe, expect, it } from 'vitest';
import { BudgetTracker } from '../../src/bot/spending/budget-state.js';
import { decideOpen } from '../../src/strategy/decide-open.js';
import { scorePool } from '../../src/strategy/score.js';
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
});
