/**
 * The running totals the strategy's budget guards need, from the ledger (the one source of truth,
 * so they survive restarts). P&L is marked conservatively: what came back in cash, plus what is
 * still held valued at the late sell-back rate (sealed packs at the strategy's fraction), minus spend.
 */

import { DAY_MS } from '../core/clock.js';
import { applyRate } from '../core/money.js';
import type { Ledger } from '../store/ledger.js';
import { LATE_RATE } from '../strategy/listing-model.js';
import { sealedValueCents } from '../strategy/pull-policy.js';
import type { Strategy } from '../strategy/strategy-schema.js';

export interface SpendTotals {
  spentTodayCents: number;
  spentTotalCents: number;
  realizedPnlCents: number;
}

export function spendTotals(ledger: Ledger, account: string, strategy: Strategy, now: number): SpendTotals {
  const data = ledger.reportData(0, now);
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  let today = 0;
  let total = 0;
  for (const o of data.orders) {
    if (o.account !== account) continue;
    total += o.totalChargedCents;
    if (o.createdAt >= dayStart) today += o.totalChargedCents;
  }
  let back = 0;
  for (const s of data.sellbacks) if (s.account === account && s.counted) back += s.payoutCents;
  for (const l of data.listings)
    if (l.account === account && l.state === 'filled') back += l.proceedsCents ?? 0;
  let held = 0;
  for (const p of ledger.holdings(account))
    held +=
      p.kind === 'sealed_pack'
        ? Math.round(sealedValueCents(p.valueCents, strategy))
        : applyRate(p.valueCents, LATE_RATE);
  return { spentTodayCents: today, spentTotalCents: total, realizedPnlCents: back + held - total };
}
