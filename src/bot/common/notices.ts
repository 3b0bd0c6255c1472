/**
 * The events the bot tells an operator about (docs/operations.md), built from ledger rows: pure
 * functions of what happened, so every call site emits the same shape. Ids name the occurrence
 * (an order key, a pull id, a day), which is what makes delivery at most once per webhook.
 */
import { iso } from '../../core/clock.js';
import { formatUsd } from '../../core/money.js';
import type { Notifier, NotifyEvent } from '../../obs/notify/event.js';
import type { ConfirmedOrder } from '../../store/ledger.js';
import { describeOrder } from '../../store/order-facts.js';
import type { ReportTotals } from '../../store/pnl.js';
import type { Intent, PullRow } from '../../store/types.js';

function orderConfirmed(account: string, c: ConfirmedOrder, at: number): NotifyEvent {
  const { order, pulls } = c;
  const value = pulls.reduce((n, p) => n + p.valueCents, 0);
  const settled = order.checkoutId.startsWith('settled:');
  return {
    id: `order_confirmed:${order.intentKey}`,
    event: 'order_confirmed',
    account,
    at,
    summary:
      order.operation === 'card'
        ? `bought ${pulls[0]?.name ?? order.cardId ?? 'a card'} (${order.category}) for ${formatUsd(order.totalChargedCents)} with the fee; worth ${formatUsd(value)}${order.needsReview ? ' (the service flagged it for review: held)' : ''}${settled ? ' (settled from evidence)' : ''}`
        : `opened ${order.quantity} × ${order.packType ?? '?'} (${order.category}, ${order.riskLevel ?? '?'}) for ${formatUsd(order.totalChargedCents)}; pulls worth ${formatUsd(value)}${settled ? ' (settled from evidence)' : ''}`,
    data: {
      order_key: order.intentKey,
      checkout_id: order.checkoutId,
      category: order.category,
      pack_type: order.packType,
      risk_level: order.riskLevel,
      quantity: order.quantity,
      charged_cents: order.totalChargedCents,
      pulls: pulls.length,
      pulls_value_cents: value,
      balance_cents: order.remainingBalanceCents,
      settled_by_evidence: settled,
      ...(order.operation === 'card'
        ? { card_id: order.cardId, price_cents: order.priceCents, needs_review: order.needsReview }
        : {}),
    },
  };
}

/** A newly booked order: `order_confirmed`, and a `big_pull` for each pull worth the multiple. */
export function announceBooked(notifier: Notifier, account: string, c: ConfirmedOrder): void {
  const at = c.order.createdAt;
  notifier.notify(orderConfirmed(account, c, at));
  if (notifier.wants('big_pull') && c.order.operation === 'pack')
    for (const e of bigPulls(account, c, notifier.bigPullMultiple, at)) notifier.notify(e);
}

/** Pulls of a newly booked order worth at least `multiple` × the price of one pack. */
function bigPulls(account: string, c: ConfirmedOrder, multiple: number, at: number): NotifyEvent[] {
  const { order, pulls } = c;
  if (!Number.isFinite(multiple) || order.quantity <= 0 || order.totalChargedCents <= 0) return [];
  const price = order.totalChargedCents / order.quantity;
  return pulls
    .filter((p: PullRow) => p.valueCents >= multiple * price)
    .map((p) => ({
      id: `big_pull:${p.pullId}`,
      event: 'big_pull' as const,
      account,
      at,
      summary: `pulled ${p.name} worth ${formatUsd(p.valueCents)} from a ${formatUsd(Math.round(price))} ${order.packType ?? 'pack'} (${(p.valueCents / price).toFixed(1)}×)`,
      data: {
        pull_id: p.pullId,
        card_id: p.cardId,
        name: p.name,
        kind: p.kind,
        value_cents: p.valueCents,
        pack_price_cents: Math.round(price),
        multiple: Math.round((p.valueCents / price) * 100) / 100,
        order_key: order.intentKey,
      },
    }));
}

export function orderFailed(
  account: string,
  intent: Intent,
  code: string,
  why: string,
  at: number,
): NotifyEvent {
  return {
    id: `order_failed:${intent.key}`,
    event: 'order_failed',
    account,
    at,
    summary: `order ${describeOrder(intent)} not placed: ${code} ${why}`,
    data: { order_key: intent.key, code, reason: why, attempts: intent.attempts },
  };
}

export function orderInDoubt(
  account: string,
  intent: Intent,
  why: string,
  parked: boolean,
  at: number,
): NotifyEvent {
  return {
    id: `order_in_doubt:${intent.key}${parked ? ':parked' : ''}`,
    event: 'order_in_doubt',
    account,
    at,
    summary: parked
      ? `order ${describeOrder(intent)} parked for review, no new order until settled (packbot orders --in-doubt): ${why}`
      : `order ${describeOrder(intent)} outcome unknown, settling by evidence: ${why}`,
    data: { order_key: intent.key, parked, reason: why },
  };
}

export function windowMissed(
  account: string,
  pull: Pick<PullRow, 'pullId' | 'name'> | { pullId: string; name?: string },
  at: number,
  amounts: { expectedCents?: number; paidCents?: number } = {},
): NotifyEvent {
  const paid =
    amounts.paidCents !== undefined && amounts.expectedCents !== undefined
      ? `: paid ${formatUsd(amounts.paidCents)} instead of ${formatUsd(amounts.expectedCents)}`
      : ' before a decision; using the fallback rule';
  return {
    id: `window_missed:${pull.pullId}`,
    event: 'window_missed',
    account,
    at,
    summary: `sell-back window missed for ${pull.name ?? pull.pullId}${paid}`,
    data: {
      pull_id: pull.pullId,
      expected_cents: amounts.expectedCents ?? null,
      paid_cents: amounts.paidCents ?? null,
    },
  };
}

export function paused(reasons: readonly string[], at: number): NotifyEvent {
  return {
    id: `paused:${at}:${reasons.join(',')}`,
    event: 'paused',
    account: null,
    at,
    summary: `opening packs paused (${reasons.join(', ')}); selling back and listings go on`,
    data: { reasons },
  };
}

export function resumed(at: number): NotifyEvent {
  return {
    id: `resumed:${at}`,
    event: 'resumed',
    account: null,
    at,
    summary: 'opening packs resumed',
    data: {},
  };
}

export function stopLoss(account: string, pnlCents: number, limitCents: number, at: number): NotifyEvent {
  return {
    id: `stop_loss:${account}:${at}`,
    event: 'stop_loss',
    account,
    at,
    summary: `stop-loss reached: marked P&L ${formatUsd(pnlCents)} (limit -${formatUsd(limitCents)}); no new orders`,
    data: { marked_pnl_cents: pnlCents, stop_loss_cents: limitCents },
  };
}

export function fatal(error: unknown, at: number): NotifyEvent {
  const code = String((error as { code?: unknown }).code ?? (error as Error)?.name ?? 'Error');
  const message = error instanceof Error ? error.message : String(error);
  return {
    id: `fatal:${at}`,
    event: 'fatal',
    account: null,
    at,
    summary: `stopping on a fatal error: ${code} ${message}`,
    data: { code, message },
  };
}

/** The UTC day that starts at `dayStart`, from the report's totals (cohort: orders of that day). */
export function dailySummary(account: string, dayStart: number, t: ReportTotals, at: number): NotifyEvent {
  const day = iso(dayStart).slice(0, 10);
  const luck = t.luckSigma === null ? 'n/a' : `${t.luckSigma >= 0 ? '+' : ''}${t.luckSigma.toFixed(2)}σ`;
  return {
    id: `daily_summary:${account}:${day}`,
    event: 'daily_summary',
    account,
    at,
    summary: `${day}: ${t.packsOpened} packs in ${t.orders} orders, spent ${formatUsd(t.spendCents)}, sell-backs ${formatUsd(t.sellbackPayoutCents)}, listings ${formatUsd(t.listingProceedsCents)}, net ${formatUsd(t.netCents)}, luck ${luck}`,
    data: {
      day,
      orders: t.orders,
      packs: t.packsOpened,
      spend_cents: t.spendCents,
      payouts_cents: t.sellbackPayoutCents,
      proceeds_cents: t.listingProceedsCents,
      holdings: t.holdings,
      holdings_sellback_cents: t.holdingsSellbackCents,
      net_cents: t.netCents,
      luck_sigma: t.luckSigma,
    },
  };
}
