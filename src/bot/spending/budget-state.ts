/**
 * The running totals the strategy's budget guards need. Spend follows the ledger's orders by row
 * (read once from the start, then only the rows booked since), so an order booked by any path — an
 * answer, evidence, an adopted extra charge — counts, and a decision never rescans months of
 * history. Orders not settled yet count at their worst case (`inDoubtCents`). P&L is marked by
 * the strategy's one definition (`markedPnlCents`), as every backtest path marks it: cards still
 * ours at the late sell-back rate, sealed packs at the strategy's fraction of their value.
 */
import { DAY_MS } from '../../core/clock.js';
import { applyRate, type Cents } from '../../core/money.js';
import type { Ledger } from '../../store/ledger.js';
import { worstCaseOf } from '../../store/order-facts.js';
import type { Intent } from '../../store/types.js';
import { markedPnlCents } from '../../strategy/budget.js';
import { LATE_RATE } from '../../strategy/listing-model.js';
import { sealedValueCents } from '../../strategy/pull-policy.js';
import type { Strategy } from '../../strategy/strategy-schema.js';

export interface SpendTotals {
  spentTodayCents: number;
  spentTotalCents: number;
  /** Cash back − spend + what is still ours, marked (strategy/budget.ts `markedPnlCents`). */
  markedPnlCents: number;
  /** The worst case of the orders not settled yet (strategy/budget.ts `worstCaseCents`). */
  inDoubtCents: number;
}

/** The worst case of orders not settled yet (store/order-facts.ts `worstCaseOf`), summed. */
function inDoubtCentsOf(intents: readonly Intent[]): number {
  let sum = 0;
  for (const i of intents) sum += worstCaseOf(i);
  return sum;
}

export class BudgetTracker {
  private spentTotal = 0;
  private cashBack = 0;
  private readonly spentByDay = new Map<number, number>();
  /** The last order row counted. */
  private lastRow = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly account: string,
    private readonly strategy: Strategy,
  ) {
    this.catchUp();
    this.cashBack = ledger.payoutsCounted(account);
  }

  /** Counts the orders booked since the last look. */
  private catchUp(): void {
    for (const o of this.ledger.chargesAfter(this.account, this.lastRow)) {
      this.spentTotal += o.cents;
      const day = Math.floor(o.at / DAY_MS);
      this.spentByDay.set(day, (this.spentByDay.get(day) ?? 0) + o.cents);
      this.lastRow = o.row;
    }
  }

  /** Sell-back payouts (newly counted only); listing proceeds are read from the books. */
  cash(cents: Cents): void {
    this.cashBack += cents;
  }

  totals(now: number): SpendTotals {
    this.catchUp();
    let held = 0;
    let listed = 0;
    let sealed = 0; // fractional cents, rounded once by markedPnlCents
    for (const [kind, status, valueCents, n] of this.ledger.ownedValues(this.account))
      if (kind === 'sealed_pack') sealed += sealedValueCents(valueCents, this.strategy) * n;
      else if (status === 'listed' || status === 'list_pending')
        listed += applyRate(valueCents, LATE_RATE) * n;
      else held += applyRate(valueCents, LATE_RATE) * n;
    return {
      spentTodayCents: this.spentByDay.get(Math.floor(now / DAY_MS)) ?? 0,
      spentTotalCents: this.spentTotal,
      // A sale's proceeds count once a balance reading credits them (src/store/books.ts).
      markedPnlCents: markedPnlCents(
        this.cashBack + this.ledger.listingProceedsCents(this.account) - this.spentTotal,
        held,
        listed,
        sealed,
      ),
      inDoubtCents: inDoubtCentsOf(this.ledger.unresolvedIntents(this.account)),
    };
  }
}
