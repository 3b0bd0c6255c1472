/**
 * Prometheus metrics: every `packbot_` metric the bot exports is registered here (docs/metrics.md
 * has one row each, kept in step by test/deploy/metrics-docs.test.ts), plus the default process
 * metrics. Each Metrics object owns its Registry, so tests and several bots in one process never
 * collide. Label values come only from small fixed sets: anything else becomes `other`, so a bad
 * value can never explode cardinality or leak an id.
 * Account-scoped series carry `account` (the config's account name, 1-32 of a-z 0-9 _ -): each
 * account bot writes through its `forAccount` view.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { ENDPOINTS } from '../api/partner-api.js';
import { CATEGORIES, RISK_LEVELS } from '../api/schemas.js';
import { NOTIFY_EVENTS } from '../config/notify-config.js';
import type { Cents } from '../core/money.js';
import { INTEGRITY_REASONS } from '../strategy/pool-integrity.js';
import type { PauseStatus } from './kill-switch.js';
import { ModelMetrics } from './model-metrics.js';

const PREFIX = 'packbot_';

/** Why opening packs is paused: the kill switch file, the control endpoint, the stop-loss guard. */
const PAUSE_REASONS = ['file', 'endpoint', 'stop_loss'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];
/**
 * Why the bot's HTTP server refused a request: `host` (421, a Host not allowed), `token` (401, no or
 * a wrong bearer token), `no_token` (403, a read beyond loopback with no token configured).
 */
export const HTTP_REFUSAL_REASONS = ['host', 'token', 'no_token'] as const;
export type HttpRefusalReason = (typeof HTTP_REFUSAL_REASONS)[number];
const OTHER = 'other';
/**
 * prom-client's default gauges that carry a `_total` suffix (a counter's suffix: `promtool check
 * metrics` rejects them). Each is the sum of its by-type sibling (`nodejs_active_handles{type}`
 * etc.), so `sum(nodejs_active_handles)` keeps the information.
 */
export const DROPPED_DEFAULT_METRICS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;
/** Sampling period of the default metrics' event-loop lag histogram (ms). */
const EVENT_LOOP_SAMPLE_MS = 100;
/** At most this many distinct pack types are labelled; the rest are `other`. */
export const MAX_PACK_TYPES = 64;

const CATEGORY_SET = new Set<string>(CATEGORIES);
const RISK_SET = new Set<string>(RISK_LEVELS);
const ENDPOINT_SET = new Set<string>(Object.values(ENDPOINTS));
const INTEGRITY_SET = new Set<string>(INTEGRITY_REASONS);
const NOTIFY_EVENT_SET = new Set<string>(NOTIFY_EVENTS);
/** What became of one event for one webhook. */
const NOTIFY_RESULTS = ['sent', 'failed', 'dropped'] as const;
export type NotifyResult = (typeof NOTIFY_RESULTS)[number];
/** A shop card's decision at a sync: bought, or the scorer's skip code (card-score.ts). */
export const SHOP_DECISIONS = ['buy', 'disabled', 'category', 'watch_limit', 'price_cap', 'edge'] as const;
export type ShopDecision = (typeof SHOP_DECISIONS)[number];
/** Refusal codes of a card purchase worth a label; anything else is `other`. */
const CARD_REFUSALS = new Set([
  'PRICE_CHANGED',
  'OWN_LISTING',
  'CARD_NO_LONGER_AVAILABLE',
  'DAILY_CARD_LIMIT_REACHED',
  'RATE_LIMITED',
  'NOT_FOUND',
  'BAD_REQUEST',
]);
const OPERATION_TO_ENDPOINT = new Map<string, string>(Object.entries(ENDPOINTS));

export type StatusLabel = '2xx' | '3xx' | '4xx' | '429' | '5xx' | 'transport' | 'other';

/**
 * HTTP status → its class; anything without a status (reset, timeout, DNS) is `transport`. 429 is
 * its own value: being rate limited is a pacing fault (an alert), not a rejected request.
 */
export function statusLabel(status: number | 'transport' | undefined): StatusLabel {
  if (status === undefined || status === 'transport') return 'transport';
  if (!Number.isInteger(status) || status < 200 || status > 599) return 'other';
  if (status === 429) return '429';
  return `${Math.floor(status / 100)}xx` as StatusLabel;
}

/** Accepts an operation name (`purchasePacks`) or `METHOD /path`; unknown → `other`. */
export function endpointLabel(operationOrEndpoint: string): string {
  const viaOp = OPERATION_TO_ENDPOINT.get(operationOrEndpoint);
  if (viaOp) return viaOp;
  return ENDPOINT_SET.has(operationOrEndpoint) ? operationOrEndpoint : OTHER;
}

const usd = (cents: Cents) => cents / 100;

export class Metrics {
  readonly registry = new Registry();
  /** The account label of a `forAccount` view; none on the process-wide object. */
  private readonly acct: Readonly<{ account?: string }> = {};
  private readonly packTypes = new Set<string>();

  readonly packsOpenedTotal = new Counter({
    name: `${PREFIX}packs_opened_total`,
    help: 'Packs opened (confirmed orders), by category, pack type and risk level',
    labelNames: ['category', 'pack_type', 'risk_level', 'account'] as const,
    registers: [this.registry],
  });
  readonly spendUsdTotal = new Counter({
    name: `${PREFIX}spend_usd_total`,
    help: 'USD charged for confirmed orders',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly sellbackPayoutUsdTotal = new Counter({
    name: `${PREFIX}sellback_payout_usd_total`,
    help: 'USD credited by sell-backs (each pull counted once)',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly balanceUsd = new Gauge({
    name: `${PREFIX}balance_usd`,
    help: 'Last balance reported by the service, USD',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly packsLeftTodayGauge = new Gauge({
    name: `${PREFIX}packs_left_today`,
    help: 'Packs the account may still open this UTC day (last reported)',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly packEvRatio = new Gauge({
    name: `${PREFIX}pack_ev_ratio`,
    help: 'Scored expected value divided by price, by category, pack type and risk level',
    labelNames: ['category', 'pack_type', 'risk_level', 'account'] as const,
    registers: [this.registry],
  });
  readonly apiRequestsTotal = new Counter({
    name: `${PREFIX}api_requests_total`,
    help: 'Partner API requests, by endpoint and status class (or transport failure)',
    labelNames: ['endpoint', 'status'] as const,
    registers: [this.registry],
  });
  readonly apiRequestDurationSeconds = new Histogram({
    name: `${PREFIX}api_request_duration_seconds`,
    help: 'Partner API request duration, by endpoint',
    labelNames: ['endpoint'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly sellbackWindowMissedTotal = new Counter({
    name: `${PREFIX}sellback_window_missed_total`,
    help: 'Pulls that were to be sold back but missed the 0.9 window',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly decisionLatencySeconds = new Histogram({
    name: `${PREFIX}decision_latency_seconds`,
    help: 'Time from a pull being received to its sell-back request being sent',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120],
    registers: [this.registry],
  });
  readonly listingFeeRateGauge = new Gauge({
    name: `${PREFIX}listing_fee_rate`,
    help: 'Share of sale prices the marketplace kept, over the listing sales the balance credited',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly balanceAdjustmentsUsd = new Gauge({
    name: `${PREFIX}balance_adjustments_usd`,
    help: 'Sum of the balance changes the books could not attribute (deposits, withdrawals, unknown)',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly listingsActiveGauge = new Gauge({
    name: `${PREFIX}listings_active`,
    help: 'Marketplace listings currently active',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly ordersInDoubtGauge = new Gauge({
    name: `${PREFIX}orders_in_doubt`,
    help: 'Purchase orders in doubt: sent, no clear answer yet and not on the wire (parked included)',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  // ---- beyond DESIGN.md (documented in docs/metrics.md)
  readonly ordersParkedGauge = new Gauge({
    name: `${PREFIX}orders_parked`,
    help: 'Orders in doubt the evidence cannot settle yet: read again on a backoff, never re-sent',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly budgetInDoubtUsd = new Gauge({
    name: `${PREFIX}budget_in_doubt_usd`,
    help: 'The worst case of orders not settled yet, counted against every spend cap',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly reconcileBalanceDriftUsd = new Gauge({
    name: `${PREFIX}reconcile_balance_drift_usd`,
    help: 'Reported balance minus the balance the ledger expects, at the last reconciliation',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly reconcileVaultDriftCards = new Gauge({
    name: `${PREFIX}reconcile_vault_drift_cards`,
    help: 'Cards the ledger and the vault disagree on, at the last reconciliation',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly vaultUnknownCardsGauge = new Gauge({
    name: `${PREFIX}vault_unknown_cards`,
    help: 'Vault cards that are not from any of our orders (opened outside the bot), at the last reconciliation',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly poolRejectedTotal = new Counter({
    name: `${PREFIX}pool_rejected_total`,
    help: 'Pool reads scored and never opened because their prices failed the integrity check, by reason',
    labelNames: ['reason', 'account'] as const,
    registers: [this.registry],
  });
  readonly pausedGauge = new Gauge({
    name: `${PREFIX}paused`,
    help: '1 while opening packs is paused for this reason (file, endpoint, stop_loss), else 0; max() = paused at all',
    labelNames: ['reason', 'account'],
    registers: [this.registry],
  });
  readonly notificationsTotal = new Counter({
    name: `${PREFIX}notifications_total`,
    help: 'Webhook notifications by event and result (sent, failed after retries, dropped from a full queue or at shutdown), one per webhook',
    labelNames: ['event', 'result'] as const,
    registers: [this.registry],
  });
  readonly httpRefusedTotal = new Counter({
    name: `${PREFIX}http_refused_total`,
    help: "Requests the bot's HTTP server refused, by reason: host (421), token (401), no_token (403)",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly budgetMinBalanceUsd = new Gauge({
    name: `${PREFIX}budget_min_balance_usd`,
    help: "The strategy's balance reserve (budget.min_balance_usd): no order spends below it",
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly budgetSpendCapUsd = new Gauge({
    name: `${PREFIX}budget_spend_cap_usd`,
    help: "The strategy's spend caps, by period (day: max_daily_spend_usd, total: max_total_spend_usd)",
    labelNames: ['period', 'account'] as const,
    registers: [this.registry],
  });
  readonly strategyMinEvRatio = new Gauge({
    name: `${PREFIX}strategy_min_ev_ratio`,
    help: "The strategy's open.min_ev_ratio: a pack is opened only when its realized EV / price reaches it",
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly budgetSpentUsd = new Gauge({
    name: `${PREFIX}budget_spent_usd`,
    help: 'USD spent against the caps, from the ledger, by period (day: this UTC day, total: ever)',
    labelNames: ['period', 'account'] as const,
    registers: [this.registry],
  });

  // ---- card buying (the strategy's `cards` section)
  readonly cardsBoughtTotal = new Counter({
    name: `${PREFIX}cards_bought_total`,
    help: 'Cards bought with card purchases (confirmed orders), by category',
    labelNames: ['category', 'account'] as const,
    registers: [this.registry],
  });
  readonly cardSpendUsdTotal = new Counter({
    name: `${PREFIX}card_spend_usd_total`,
    help: 'USD charged for bought cards, price plus the buyer fee (also in packbot_spend_usd_total)',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });
  readonly shopCardsGauge = new Gauge({
    name: `${PREFIX}shop_cards`,
    help: 'Shop cards at the last full shop sync, by decision: buy, or the reason it was skipped',
    labelNames: ['decision', 'account'] as const,
    registers: [this.registry],
  });
  readonly cardPurchasesRefusedTotal = new Counter({
    name: `${PREFIX}card_purchases_refused_total`,
    help: 'Card purchases the service refused (nothing charged), by code',
    labelNames: ['code', 'account'] as const,
    registers: [this.registry],
  });
  readonly cardsNeedingReviewGauge = new Gauge({
    name: `${PREFIX}cards_needing_review`,
    help: 'Bought cards the service flagged needs_review and still held (sold back or shipped by an operator: gone)',
    labelNames: ['account'] as const,
    registers: [this.registry],
  });

  /** Expected vs realized (docs/model-drift.md). */
  readonly model = new ModelMetrics(this.registry);

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) {
      // The event-loop lag histogram samples every 100 ms, not prom-client's 10 ms: its timer alone
      // kept an idle bot at ~0.4% of a core (100 wake-ups a second); ten a second still give
      // the lag quantiles a 15 s scrape reads.
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
      for (const name of DROPPED_DEFAULT_METRICS) this.registry.removeSingleMetric(name);
    }
    // The kill switch's reasons exported from the start, so `max(packbot_paused)` is 0 rather
    // than empty; `stop_loss` is exported per account by `forAccount`.
    for (const reason of PAUSE_REASONS) if (reason !== 'stop_loss') this.pausedGauge.set({ reason }, 0);
    for (const reason of HTTP_REFUSAL_REASONS) this.httpRefusedTotal.inc({ reason }, 0);
  }

  /**
   * The same metrics seen from one account: every account-scoped series it writes carries
   * `account="<name>"`, so several accounts in one bot export side by side instead of overwriting
   * each other. Process-wide series (API requests, latencies, the kill switch, notifications,
   * refused HTTP requests) are written as by the Metrics object itself.
   */
  forAccount(account: string): Metrics {
    const view = Object.create(this) as Metrics;
    Object.defineProperty(view, 'acct', { value: Object.freeze({ account }), enumerable: false });
    view.pausedGauge.set({ reason: 'stop_loss', account }, 0);
    // Counters exported at 0 from the start: `increase()` misses the first step of a series that
    // appears with it (a first missed window would never alert).
    for (const c of [
      this.spendUsdTotal,
      this.sellbackPayoutUsdTotal,
      this.sellbackWindowMissedTotal,
      this.cardSpendUsdTotal,
    ])
      c.inc({ account }, 0);
    return view;
  }

  /** Declares the pack types the catalog lists (up to MAX_PACK_TYPES); others are labelled `other`. */
  setKnownPackTypes(packTypes: Iterable<string>): void {
    for (const p of packTypes) {
      if (this.packTypes.size >= MAX_PACK_TYPES) break;
      if (/^[A-Za-z0-9_.:-]{1,64}$/.test(p)) this.packTypes.add(p);
    }
  }

  private packLabels(category: string, packType: string, risk: string) {
    return {
      category: CATEGORY_SET.has(category) ? category : OTHER,
      pack_type: this.packTypes.has(packType) ? packType : OTHER,
      risk_level: RISK_SET.has(risk) ? risk : OTHER,
    };
  }

  packsOpened(category: string, packType: string, risk: string, n: number): void {
    this.packsOpenedTotal.inc({ ...this.packLabels(category, packType, risk), ...this.acct }, n);
  }

  spend(cents: Cents): void {
    this.spendUsdTotal.inc(this.acct, usd(cents));
  }

  /** Add only the payout the ledger reports as newly counted (`SellBackOutcome.newlyPaidCents`). */
  sellbackPayout(cents: Cents): void {
    if (cents > 0) this.sellbackPayoutUsdTotal.inc(this.acct, usd(cents));
  }

  balance(cents: Cents): void {
    this.balanceUsd.set(this.acct, usd(cents));
  }

  packsLeftToday(n: number): void {
    this.packsLeftTodayGauge.set(this.acct, n);
  }

  packEv(category: string, packType: string, risk: string, ratio: number): void {
    if (Number.isFinite(ratio))
      this.packEvRatio.set({ ...this.packLabels(category, packType, risk), ...this.acct }, ratio);
  }

  /** One finished API request (or transport failure), with its duration in seconds. */
  apiRequest(operationOrEndpoint: string, status: number | 'transport' | undefined, seconds: number): void {
    const endpoint = endpointLabel(operationOrEndpoint);
    this.apiRequestsTotal.inc({ endpoint, status: statusLabel(status) });
    if (Number.isFinite(seconds) && seconds >= 0)
      this.apiRequestDurationSeconds.observe({ endpoint }, seconds);
  }

  sellbackWindowMissed(n = 1): void {
    this.sellbackWindowMissedTotal.inc(this.acct, n);
  }

  /** Pull received → sell-back request sent, in milliseconds of the injected clock. */
  decisionLatency(ms: number): void {
    if (Number.isFinite(ms) && ms >= 0) this.decisionLatencySeconds.observe(ms / 1000);
  }

  listingsActive(n: number): void {
    this.listingsActiveGauge.set(this.acct, n);
  }

  /**
   * Orders in doubt and parked, and the worst case of every unsettled order (src/store/order-facts.ts
   * `doubtFigures` says which is which).
   */
  ordersInDoubt(n: number, parked = 0, worstCaseCents: Cents = 0): void {
    this.ordersInDoubtGauge.set(this.acct, n);
    this.ordersParkedGauge.set(this.acct, parked);
    this.budgetInDoubtUsd.set(this.acct, usd(worstCaseCents));
  }

  /** The measured marketplace fee (null: no credited sale yet) and the adjustments' sum. */
  books(feeRate: number | null, adjustmentsCents: Cents): void {
    if (feeRate !== null && Number.isFinite(feeRate)) this.listingFeeRateGauge.set(this.acct, feeRate);
    this.balanceAdjustmentsUsd.set(this.acct, usd(adjustmentsCents));
  }

  reconcileDrift(balanceDriftCents: Cents, vaultDriftCards: number): void {
    this.reconcileBalanceDriftUsd.set(this.acct, usd(balanceDriftCents));
    this.reconcileVaultDriftCards.set(this.acct, vaultDriftCards);
  }

  vaultUnknownCards(n: number): void {
    this.vaultUnknownCardsGauge.set(this.acct, n);
  }

  /** One pool read rejected by the price integrity check (reason from INTEGRITY_REASONS). */
  poolRejected(reason: string): void {
    this.poolRejectedTotal.inc({ reason: INTEGRITY_SET.has(reason) ? reason : OTHER, ...this.acct });
  }

  /**
   * Opening paused (or not) for one reason; the reasons are independent series. The kill switch
   * (`file`, `endpoint`) pauses every account and carries no account label; `stop_loss` is an
   * account's own.
   */
  paused(reason: PauseReason, on: boolean): void {
    this.pausedGauge.set({ reason, ...(reason === 'stop_loss' ? this.acct : {}) }, on ? 1 : 0);
  }

  /** One event's fate at one webhook (event from NOTIFY_EVENTS, else `other`). */
  notification(event: string, result: NotifyResult): void {
    this.notificationsTotal.inc({ event: NOTIFY_EVENT_SET.has(event) ? event : OTHER, result });
  }

  /** One request the HTTP server refused (reason: host, token, no_token). */
  httpRefused(reason: HttpRefusalReason): void {
    this.httpRefusedTotal.inc({ reason });
  }

  /** The kill switch's sources (file, endpoint) as they are now. */
  killSwitch(status: PauseStatus): void {
    for (const reason of ['file', 'endpoint'] as const) this.paused(reason, status.reasons.includes(reason));
  }

  /** The strategy's budget limits, in USD as the strategy file writes them. */
  budgetLimits(limits: { minBalanceUsd: number; dailyCapUsd: number; totalCapUsd: number }): void {
    this.budgetMinBalanceUsd.set(this.acct, limits.minBalanceUsd);
    this.budgetSpendCapUsd.set({ period: 'day', ...this.acct }, limits.dailyCapUsd);
    this.budgetSpendCapUsd.set({ period: 'total', ...this.acct }, limits.totalCapUsd);
  }

  /** Spend counted against the caps (the budget guards' own totals). */
  minEvRatio(ratio: number): void {
    this.strategyMinEvRatio.set(this.acct, ratio);
  }

  budgetSpent(todayCents: Cents, totalCents: Cents): void {
    this.budgetSpentUsd.set({ period: 'day', ...this.acct }, usd(todayCents));
    this.budgetSpentUsd.set({ period: 'total', ...this.acct }, usd(totalCents));
  }

  /** Prometheus text exposition. */
  cardBought(category: string, chargedCents: Cents): void {
    this.cardsBoughtTotal.inc({ category: CATEGORY_SET.has(category) ? category : OTHER, ...this.acct });
    this.cardSpendUsdTotal.inc(this.acct, usd(chargedCents));
  }

  /** The last shop sync: how many cards each decision got (every label exported, 0 when none). */
  shopCards(byDecision: Readonly<Record<ShopDecision, number>>): void {
    for (const d of SHOP_DECISIONS)
      this.shopCardsGauge.set({ decision: d, ...this.acct }, byDecision[d] ?? 0);
  }

  cardPurchaseRefused(code: string): void {
    this.cardPurchasesRefusedTotal.inc({ code: CARD_REFUSALS.has(code) ? code : OTHER, ...this.acct });
  }

  cardsNeedingReview(n: number): void {
    this.cardsNeedingReviewGauge.set(this.acct, n);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
