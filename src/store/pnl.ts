/**
 * Profit and loss from ledger rows: a pure function, so the CLI, the runner and tests share it.
 *
 * Cohort accounting: a window selects the ORDERS created in it; everything their pulls earned up to
 * `until` (sell-backs, listing fills) and everything still held at `until` belongs to them. So a
 * pack opened on Monday and sold on Tuesday counts on Monday, and every group adds up to the total.
 * Holdings are valued at what selling them back would pay at `until`: the 0.9 offer while its window
 * is open, then the 0.8 `after` offer (sealed packs cannot be sold back: 0, market value shown apart).
 * Luck: realized pull value minus the scorer's expected value, in standard deviations of the sum
 * (orders are independent, so variances add).
 */

import { LATE_RATE } from '../api/rules.js';
import { iso } from '../core/clock.js';
import { compareText } from '../core/compare-text.js';
import { applyRate, type Cents } from '../core/money.js';
import type { ReportData } from './ledger.js';
import type { OrderRow, PullRow } from './types.js';

export interface ReportTotals {
  orders: number;
  packsOpened: number;
  spendCents: Cents;
  sellbackPayoutCents: Cents;
  listingProceedsCents: Cents;
  holdings: number;
  /** What selling every holding back at `until` would pay. */
  holdingsSellbackCents: Cents;
  /** Market value at pull of every holding (sealed packs included). */
  holdingsMarketCents: Cents;
  /** payouts + proceeds + holdings at sell-back value − spend. */
  netCents: Cents;
  /** Orders that carried the scorer's expectation (only these enter the luck measure). */
  ordersWithExpectation: number;
  expectedValueCents: Cents;
  realizedValueCents: Cents;
  /** (realized − expected) / sqrt(Σ variance); null without any variance. */
  luckSigma: number | null;
}

export interface ReportGroup extends ReportTotals {
  key: string;
}

/** Card purchases on their own (they are in the totals and the `card purchase/…` rows too). */
export interface CardReport extends ReportTotals {
  /** Card prices paid, fees excluded, and the buyer fees (spend = prices + fees). */
  pricesCents: Cents;
  feesCents: Cents;
  /** Purchases the service flagged `needs_review` (their cards held for an operator). */
  needsReview: number;
}

export interface PnlReport {
  since: string;
  until: string;
  /** The account reported on; null for all accounts of the ledger. */
  account: string | null;
  totals: ReportTotals;
  /** Card purchases of the window; null when there are none. */
  cards: CardReport | null;
  byPack: ReportGroup[];
  byRiskLevel: ReportGroup[];
  byDay: ReportGroup[];
}

interface Acc extends Omit<ReportTotals, 'luckSigma'> {
  variance: number;
}

const empty = (): Acc => ({
  orders: 0,
  packsOpened: 0,
  spendCents: 0,
  sellbackPayoutCents: 0,
  listingProceedsCents: 0,
  holdings: 0,
  holdingsSellbackCents: 0,
  holdingsMarketCents: 0,
  netCents: 0,
  ordersWithExpectation: 0,
  expectedValueCents: 0,
  realizedValueCents: 0,
  variance: 0,
});

function finish(a: Acc): ReportTotals {
  const { variance, ...rest } = a;
  const net = a.sellbackPayoutCents + a.listingProceedsCents + a.holdingsSellbackCents - a.spendCents;
  const luckSigma =
    variance > 0
      ? Math.round(((a.realizedValueCents - a.expectedValueCents) / Math.sqrt(variance)) * 100) / 100
      : null;
  return { ...rest, netCents: net, luckSigma };
}

/** What a held pull would pay if sold back at `at`. */
export function sellbackValueAt(pull: PullRow, at: number): Cents {
  if (pull.kind !== 'card') return 0;
  if (pull.buybackCents !== null && pull.buybackValidUntil !== null && at < pull.buybackValidUntil)
    return pull.buybackCents;
  if (pull.afterCents !== null) return pull.afterCents;
  // A bought card after its lock: 0.8 of market value (the value at purchase stands in for it).
  return pull.origin === 'purchase' ? applyRate(pull.valueCents, LATE_RATE) : 0;
}

const packKey = (o: OrderRow): string =>
  o.operation === 'pack' ? `${o.category}/${o.packType ?? '?'}` : `card purchase/${o.category}`;
const riskKey = (o: OrderRow): string => o.riskLevel ?? 'n/a';
const dayKey = (o: OrderRow): string => iso(o.createdAt).slice(0, 10);

export function computeReport(
  data: ReportData,
  since: number,
  until: number,
  options: { account?: string } = {},
): PnlReport {
  const total = empty();
  const groups = { pack: new Map<string, Acc>(), risk: new Map<string, Acc>(), day: new Map<string, Acc>() };
  const keyers = { pack: packKey, risk: riskKey, day: dayKey };
  const orders = data.orders.filter(
    (o) =>
      o.createdAt >= since &&
      o.createdAt <= until &&
      (options.account === undefined || o.account === options.account),
  );
  const byCheckout = new Map(orders.map((o) => [o.checkoutId, o]));
  const accsOf = new Map<string, Acc[]>();
  const cards = empty();
  let pricesCents = 0;
  let feesCents = 0;
  let needsReview = 0;
  for (const o of orders) {
    const accs = [total];
    if (o.operation === 'card') {
      accs.push(cards);
      feesCents += o.feeCents ?? 0;
      pricesCents += o.priceCents ?? o.totalChargedCents - (o.feeCents ?? 0);
      if (o.needsReview) needsReview++;
    }
    for (const g of ['pack', 'risk', 'day'] as const) {
      const k = keyers[g](o);
      const acc = groups[g].get(k) ?? empty();
      groups[g].set(k, acc);
      accs.push(acc);
    }
    accsOf.set(o.checkoutId, accs);
  }
  const add = (checkoutId: string | undefined, f: (a: Acc) => void) => {
    for (const a of (checkoutId && accsOf.get(checkoutId)) || []) f(a);
  };

  const pullsOf = new Map<string, PullRow[]>();
  for (const p of data.pulls) {
    if (!byCheckout.has(p.checkoutId)) continue;
    pullsOf.set(p.checkoutId, [...(pullsOf.get(p.checkoutId) ?? []), p]);
  }
  for (const o of orders) {
    const realized = (pullsOf.get(o.checkoutId) ?? []).reduce((s, p) => s + p.valueCents, 0);
    add(o.checkoutId, (a) => {
      a.orders += 1;
      a.packsOpened += o.operation === 'pack' ? o.quantity : 0;
      a.spendCents += o.totalChargedCents;
      if (o.expectedValueCents !== null) {
        a.ordersWithExpectation += 1;
        a.expectedValueCents += o.expectedValueCents;
        a.realizedValueCents += realized;
        a.variance += (o.stdevCents ?? 0) ** 2;
      }
    });
  }

  const pullById = new Map(data.pulls.map((p) => [p.pullId, p]));
  const soldBy = new Set<string>();
  for (const s of data.sellbacks) {
    if (!s.counted || s.at > until) continue;
    const pull = pullById.get(s.pullId);
    if (!pull) continue;
    soldBy.add(pull.pullId);
    add(pull.checkoutId, (a) => {
      a.sellbackPayoutCents += s.payoutCents;
    });
  }
  for (const l of data.listings) {
    if (l.state !== 'filled' || l.filledAt === null || l.filledAt > until || !l.pullId) continue;
    const pull = pullById.get(l.pullId);
    if (!pull) continue;
    soldBy.add(pull.pullId);
    add(pull.checkoutId, (a) => {
      a.listingProceedsCents += l.proceedsCents ?? 0;
    });
  }
  for (const p of data.pulls) {
    if (!byCheckout.has(p.checkoutId) || soldBy.has(p.pullId)) continue;
    // Shipped or vanished cards left our books without proceeds we know of.
    if (p.status === 'shipped' || p.status === 'gone') continue;
    const value = sellbackValueAt(p, until);
    add(p.checkoutId, (a) => {
      a.holdings += 1;
      a.holdingsSellbackCents += value;
      a.holdingsMarketCents += p.valueCents;
    });
  }

  const list = (m: Map<string, Acc>) =>
    [...m.entries()].sort(([a], [b]) => compareText(a, b)).map(([key, acc]) => ({ key, ...finish(acc) }));
  return {
    since: iso(since),
    until: iso(until),
    account: options.account ?? null,
    totals: finish(total),
    cards: cards.orders === 0 ? null : { ...finish(cards), pricesCents, feesCents, needsReview },
    byPack: list(groups.pack),
    byRiskLevel: list(groups.risk),
    byDay: list(groups.day),
  };
}
