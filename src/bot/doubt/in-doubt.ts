/**
 * Settles orders in doubt (the imperative half of evidence.ts): reads the vault, the account and the
 * purchase report, asks `judge`, and acts — books the order with the pulls found (sold or listed at
 * once by the sell side), closes it as not charged, or parks it. A pack order is never re-sent. A
 * parked order is read again on a backoff (reads only) until the evidence settles it or an operator
 * does (`packbot orders settle`); meanwhile it blocks new orders of its account. A card order is
 * re-sent with its key only once its card is in our vault: the service cannot sell that card again,
 * so the re-send cannot charge, and its replay carries the exact price.
 */

import { iterPurchaseReport } from '../../api/paginate.js';
import { LATE_RATE } from '../../api/rules.js';
import { CATEGORIES, type Category, type VaultEntry } from '../../api/schemas.js';
import { iso } from '../../core/clock.js';
import { applyRate, toCents } from '../../core/money.js';
import { NO_NOTIFIER } from '../../obs/notify/event.js';
import { boughtCardPull } from '../../store/bought-card.js';
import type { ConfirmedOrder, Intent, NewPull } from '../../store/ledger.js';
import {
  cardIdOf,
  categoryOf,
  chargeAtBound,
  isSentUnsettled,
  packTypeOf,
  quantityOf,
} from '../../store/order-facts.js';
import { freshEnds, SPEC_SELL_BACK_RULES } from '../../strategy/market-laws.js';
import type { AccountContext } from '../common/context.js';
import * as notices from '../common/notices.js';
import { readVault } from '../common/vault.js';
import type { PurchaseExecutor, PurchaseOutcome } from '../spending/executor.js';
import {
  DEFAULT_EVIDENCE_OPTIONS,
  type Evidence,
  type EvidenceOptions,
  intentWindow,
  isUnknownPull,
  judge,
  judgeCard,
} from './evidence.js';

/** The purchase report's id of the account, learnt from a confirmed order (`account_facts`). */
export const USER_ID_FACT = 'report_user_id';
const DAY_MS = 86_400_000;
/** How soon an order another loop has on the wire is looked at again. */
const ON_THE_WIRE_RECHECK_MS = 200;
/** Orders a process reads the report for, at most, to learn the account's user id. */
const MAX_LEARN_TRIES = 20;
/** The longest gap between two reads of a parked order's evidence. */
const MAX_RECHECK_MS = 10 * 60_000;

export type Resolution =
  | { status: 'confirmed'; confirmed: ConfirmedOrder; replay: boolean }
  | { status: 'failed' }
  | { status: 'in_doubt'; until: number; why: string; parked: boolean };

export interface InDoubtOptions extends AccountContext {
  executor: PurchaseExecutor;
  evidence?: Partial<EvidenceOptions>;
  /** How soon a parked intent's evidence is looked at again (ms). */
  recheckMs: number;
  /** The key has `read:pulls` (default true); without it the report is never read. */
  readsReport?: boolean;
}

export class InDoubtResolver {
  private readonly opts: EvidenceOptions;
  /** The key lacks `read:pulls` (403): the report is not asked again in this process. */
  private reportDenied = false;
  /** Confirmed orders whose report window was read to learn the account's user id. */
  private learnTries = 0;
  /** Reads of each undecided order's evidence so far (the backoff's exponent). */
  private readonly checks = new Map<string, number>();

  constructor(private readonly o: InDoubtOptions) {
    this.opts = { ...DEFAULT_EVIDENCE_OPTIONS, ...o.evidence };
    this.reportDenied = o.readsReport === false;
  }

  /**
   * Settles `intent` where the evidence can; `mayResend` false (opening paused or stopping) never
   * re-sends its key: a re-send the service does not recognise would open a pack.
   */
  async resolve(intent: Intent, mayResend = true): Promise<Resolution> {
    // The other loop's order still waiting for its answer (`sent`, not in doubt): its own send
    // records the outcome; evidence read now would race it (a card already in the vault, booked
    // here at its max_price, then again from the answer).
    if (this.o.executor.isOnTheWire(intent.key))
      return {
        status: 'in_doubt',
        until: this.o.clock.now() + ON_THE_WIRE_RECHECK_MS,
        why: 'its request is on the wire',
        parked: false,
      };
    if (intent.operation === 'card') return this.resolveCard(intent, mayResend);
    const { ledger, log, clock } = this.o;
    const evidence = await this.gather(intent);
    const now = clock.now();
    if (!evidence) {
      // Nothing read, nothing decided: read again later. Once the order must have ended, it is parked.
      const win = intentWindow(intent, this.opts);
      if (now < win.settledAt)
        return {
          status: 'in_doubt',
          until: win.settledAt,
          why: 'the vault could not be read',
          parked: false,
        };
      return this.park(intent, 'the evidence could not be read');
    }
    const verdict = judge(intent, evidence, now, this.opts);
    switch (verdict.kind) {
      case 'charged': {
        const confirmed = ledger.confirmBySettlement(intent.key, {
          ...chargeAtBound(intent),
          pulls: verdict.pulls.map(pullOf),
          by: verdict.by,
        });
        this.checks.delete(intent.key);
        log.warn(
          { intent: intent.key, pulls: verdict.pulls.length, by: verdict.by },
          'order in doubt settled: charged',
        );
        if (confirmed.recorded)
          notices.announceBooked(this.o.notifier ?? NO_NOTIFIER, this.o.account, confirmed);
        return { status: 'confirmed', confirmed, replay: false };
      }
      case 'not_charged':
        return this.notCharged(intent, verdict.by, 'order');
      case 'wait':
        return {
          status: 'in_doubt',
          until: verdict.until,
          why: verdict.why,
          parked: intent.parkedAt !== null,
        };
      case 'park':
        return this.park(intent, verdict.why);
    }
  }

  /**
   * The evidence cannot settle the order: parked (the operator told once), read again after a
   * backoff that doubles from `recheckMs` up to MAX_RECHECK_MS. Nothing is sent.
   */
  private park(intent: Intent, why: string): Resolution {
    const { ledger, log, clock } = this.o;
    if (intent.parkedAt === null) {
      const parked = ledger.parkIntent(intent.key, 'PARKED', why);
      this.o.notifier?.notify(notices.orderInDoubt(this.o.account, parked, why, true, parked.updatedAt));
      log.error(
        { intent: intent.key, why },
        'order in doubt parked: no new order until the evidence or an operator settles it (packbot orders --in-doubt)',
      );
    }
    return { status: 'in_doubt', until: clock.now() + this.backoff(intent.key), why, parked: true };
  }

  private backoff(key: string): number {
    const n = this.checks.get(key) ?? 0;
    this.checks.set(key, n + 1);
    const cap = Math.max(this.o.recheckMs, MAX_RECHECK_MS);
    return Math.min(cap, this.o.recheckMs * 2 ** Math.min(n, 20));
  }

  /** A card purchase in doubt, settled by whether the card is in the vault (evidence.ts judgeCard). */
  private async resolveCard(intent: Intent, mayResend: boolean): Promise<Resolution> {
    const { ledger, log, clock, api } = this.o;
    const cardId = cardIdOf(intent) ?? '';
    let found: VaultEntry | undefined;
    try {
      // The body names no category: every category's vault is read (rare: orders in doubt only).
      const vault = await readVault(api, CATEGORIES);
      const v = vault.get(cardId);
      if (v && v.pull_id !== null && !ledger.hasPull(v.pull_id)) found = v;
    } catch (e) {
      log.warn({ intent: intent.key, err: String(e) }, 'card order in doubt: vault not readable');
      return {
        status: 'in_doubt',
        until: clock.now() + this.o.recheckMs,
        why: 'vault not readable',
        parked: false,
      };
    }
    const verdict = judgeCard(intent, found, clock.now(), this.opts, mayResend);
    switch (verdict.kind) {
      case 'charged': {
        // No answer says what the card cost: booked at its bound, max_price + fee.
        const bound = chargeAtBound(intent);
        const maxPrice = bound.card?.priceCents ?? 0;
        const confirmed = ledger.confirmBySettlement(intent.key, {
          ...bound,
          pulls: verdict.pulls.map((v) => boughtCardOf(v, maxPrice, clock.now())),
          by: `${verdict.by} (booked at its max_price)`,
        });
        log.warn({ intent: intent.key, card: cardId }, 'card order in doubt settled: charged');
        if (confirmed.recorded)
          notices.announceBooked(this.o.notifier ?? NO_NOTIFIER, this.o.account, confirmed);
        return { status: 'confirmed', confirmed, replay: false };
      }
      case 'not_charged':
        return this.notCharged(intent, verdict.by, 'card order');
      case 'resend':
        return this.resend(intent, verdict.why);
      case 'wait':
        return { status: 'in_doubt', until: verdict.until, why: verdict.why, parked: false };
      case 'park':
        return { status: 'in_doubt', until: clock.now() + this.o.recheckMs, why: verdict.why, parked: true };
    }
  }

  /** Evidence says nothing was charged: the intent fails with it as its reason. */
  private notCharged(intent: Intent, by: string, what: string): Resolution {
    this.checks.delete(intent.key);
    const failed = this.o.ledger.failIntent(intent.key, 'NOT_CHARGED', by, undefined, by);
    this.o.log.warn({ intent: intent.key, by }, `${what} in doubt settled: not charged`);
    this.o.notifier?.notify(notices.orderFailed(this.o.account, failed, 'NOT_CHARGED', by, failed.updatedAt));
    return { status: 'failed' };
  }

  private async resend(intent: Intent, why: string): Promise<Resolution> {
    this.o.log.info({ intent: intent.key, why }, 'resolving an order by re-sending its key');
    const out: PurchaseOutcome = await this.o.executor.send(intent);
    if (out.status === 'confirmed')
      return {
        status: 'confirmed',
        confirmed: out.confirmed,
        replay: out.response.idempotent_replay === true,
      };
    if (out.status === 'failed') return { status: 'failed' };
    const now = this.o.clock.now();
    return { status: 'in_doubt', until: now + this.o.recheckMs, why: out.error.message, parked: false };
  }

  /** What the API shows about the intent; undefined when the vault cannot be read. */
  private async gather(intent: Intent): Promise<Evidence | undefined> {
    const { api, ledger, account, log } = this.o;
    const win = intentWindow(intent, this.opts);
    const category = categoryOf(intent) as Category;
    let vault: Map<string, VaultEntry>;
    try {
      vault = await readVault(api, [category]);
    } catch (e) {
      log.warn({ intent: intent.key, err: String(e) }, 'order in doubt: vault not readable');
      return undefined;
    }
    const unknownPulls = [...vault.values()].filter((v) => {
      if (!isUnknownPull(ledger, v)) return false;
      const at = Date.parse(v.pulled_at!);
      return at >= win.from && at <= win.to;
    });
    const evidence: Evidence = {
      unknownPulls,
      // A card purchase leaves no pull time, no pack count and no report row: only pack orders count.
      otherUnresolved: ledger
        .unresolvedIntents(account)
        .filter((i) => i.key !== intent.key && isSentUnsettled(i) && i.operation === 'pack').length,
    };
    try {
      const a = await api.getAccount();
      const dayStart = Date.parse(a.limits.resets_at) - DAY_MS;
      evidence.account = {
        packsToday: a.limits.packs_today,
        dayStart,
        ledgerPacksToday: ledger.packsOrderedSince(account, dayStart),
      };
    } catch (e) {
      log.warn({ intent: intent.key, err: String(e) }, 'order in doubt: account not readable');
    }
    const report = await this.reportRows(intent, win.from, win.to);
    if (report) evidence.report = report;
    return evidence;
  }

  /**
   * What the account's own report rows of the intent's pack type in [from, to] charged beyond the
   * orders the ledger booked in that window (rows may be per pack or per order: amounts are summed).
   * Undefined when the user id is not known or the report cannot be read.
   */
  private async reportRows(intent: Intent, from: number, to: number) {
    const { ledger, account, api, clock } = this.o;
    const userId = ledger.accountFact(account, USER_ID_FACT);
    if (userId === undefined || this.reportDenied) return undefined;
    const packType = packTypeOf(intent);
    try {
      let reported = 0;
      const until = Math.min(to, clock.now());
      for await (const r of iterPurchaseReport(api, { since: iso(from), until: iso(until) }, clock))
        if (r.user_id === userId && r.pack_type === packType) reported += toCents(r.amount);
      const booked = ledger
        .ordersBetween(account, from, until)
        .filter((o) => o.packType === packType)
        .reduce((n, o) => n + o.totalChargedCents, 0);
      return { unexplainedCents: reported - booked };
    } catch (e) {
      this.noteReportError(e);
      return undefined;
    }
  }

  /**
   * Learns the account's purchase report user id from an order just confirmed: the one user id with
   * a row of that pack type and amount inside the order's window. Best effort, once.
   */
  async learnUserId(intent: Intent, totalChargedCents: number, packType: string | null): Promise<void> {
    const { ledger, account } = this.o;
    if (this.reportDenied || ledger.accountFact(account, USER_ID_FACT) !== undefined) return;
    // Others buying the same pack at the same price in the same seconds make a window ambiguous;
    // a busy market may never give a clean one, and each try is a report read.
    if (++this.learnTries > MAX_LEARN_TRIES) return;
    const win = intentWindow(intent, { ...this.opts, settleMs: 0 });
    const to = Math.max(win.to, (intent.lastAnswerAt ?? 0) + this.opts.skewMs);
    try {
      const ids = new Set<string>();
      const until = Math.min(to, this.o.clock.now());
      // A row per order carries the total; a row per pack, the unit price.
      const amounts = [totalChargedCents, totalChargedCents / quantityOf(intent)];
      for await (const r of iterPurchaseReport(
        this.o.api,
        { since: iso(win.from), until: iso(until) },
        this.o.clock,
      ))
        if (r.pack_type === packType && amounts.includes(toCents(r.amount))) ids.add(r.user_id);
      if (ids.size === 1) {
        const [id] = ids;
        ledger.setAccountFact(account, USER_ID_FACT, id!);
        this.o.log.info({}, 'learnt the account purchase report id (evidence for orders in doubt)');
      }
    } catch (e) {
      this.noteReportError(e);
    }
  }

  private noteReportError(e: unknown): void {
    const status = (e as { status?: number }).status;
    if (status === 403) this.reportDenied = true;
    this.o.log.debug({ err: String(e) }, 'purchase report not readable');
  }
}

/** A vault entry as a ledger pull: its 0.9 window is the spec's 5 minutes from the pull. */
export function pullOf(v: VaultEntry): NewPull {
  const pulledAt = Date.parse(v.pulled_at ?? '') || 0;
  const bb = v.buyback;
  const basis = bb ? toCents(bb.basis_value) : toCents(v.value);
  return {
    pullId: v.pull_id ?? `card:${v.card_id}`,
    cardId: v.card_id,
    name: v.item.name,
    kind: 'card',
    valueCents: basis,
    bucket: 'unknown',
    rarityTier: 'unknown',
    isChase: false,
    buybackCents: bb ? toCents(bb.amount) : null,
    buybackRate: bb ? bb.rate : null,
    buybackValidUntil: bb ? freshEnds(pulledAt, SPEC_SELL_BACK_RULES) : null,
    afterCents: bb ? applyRate(basis, LATE_RATE) : null,
    afterRate: bb ? LATE_RATE : null,
    afterValidUntil: bb?.locked_value_until ? Date.parse(bb.locked_value_until) : null,
    pulledAt,
  };
}

/**
 * A bought card found in the vault as a ledger holding: its price is bounded by the order's
 * `max_price`; its sell-back offer and lock are the vault's own.
 */
function boughtCardOf(v: VaultEntry, maxPriceCents: number, now: number): NewPull {
  const bb = v.buyback;
  const lockEnd = bb?.locked_value_until ? Date.parse(bb.locked_value_until) : null;
  const pull = boughtCardPull({
    transactionId: v.pull_id ?? `card:${v.card_id}`,
    cardId: v.card_id,
    name: v.item.name,
    priceCents: maxPriceCents,
    valueCents: toCents(v.value),
    source: 'unknown',
    boughtAt: now,
  });
  return {
    ...pull,
    ...(bb ? { buybackCents: toCents(bb.amount), buybackRate: bb.rate } : {}),
    ...(lockEnd !== null && Number.isFinite(lockEnd) ? { buybackValidUntil: lockEnd } : {}),
  };
}
