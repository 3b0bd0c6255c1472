/**
 * The running totals the strategy's budget guards need. Read once from the ledger at start (so they
 * survive restarts), then kept up to date in memory as orders, payouts and fills are recorded, so
 * a decision never rescans months of history. P&L is marked conservatively: cash back, plus what
 * is still held valued at the late sell-back rate (sealed packs at the strategy's fraction), minus
 * spend.
 */
import { DAY_MS } from '../core/clock.js';
import { applyRate, type Cents } from '../core/money.js';
import type { Ledger } from '../store/ledger.js';
import { LATE_RATE } from '../strategy/listing-model.js';
import { sealedValueCents } from '../strategy/pull-policy.js';
import type { Strategy } from '../strategy/strategy-schema.js';

export interface SpendTotals {
  spentTodayCents: number;
  spentTotalCents: number;
  realizedPnlCents: number;
}

export class BudgetTracker {
  private spentTotal = 0;
  private cashBack = 0;
  private readonly spentByDay = new Map<number, number>();

  constructor(
    private readonly ledger: Ledger,
    private readonly account: string,
    private readonly strategy: Strategy,
    now: number,
  ) {
    const data = ledger.reportData(0, now);
    for (const o of data.orders) if (o.account === account) this.order(o.totalChargedCents, o.createdAt);
    for (const s of data.sellbacks) if (s.account === account && s.counted) this.cashBack += s.payoutCents;
    for (const l of data.listings)
      if (l.account === account && l.state === 'filled') this.cashBack += l.proceedsCents ?? 0;
  }

  order(chargedCents: Cents, at: number): void {
    this.spentTotal += chargedCents;
    const day = Math.floor(at / DAY_MS);
    this.spentByDay.set(day, (this.spentByDay.get(day) ?? 0) + chargedCents);
  }

  /** Sell-back payouts (newly counted only) and listing proceeds. */
  cash(cents: Cents): void {
    this.cashBack += cents;
  }

  totals(now: number): SpendTotals {
    let held = 0;
    for (const p of this.ledger.holdings(this.account))
      held +=
        p.kind === 'sealed_pack'
          ? Math.round(sealedValueCents(p.valueCents, this.strategy))
          : applyRate(p.valueCents, LATE_RATE);
    return {
      spentTodayCents: this.spentByDay.get(Math.floor(now / DAY_MS)) ?? 0,
      spentTotalCents: this.spentTotal,
      realizedPnlCents: this.cashBack + held - this.spentTotal,
    };
  }
}
