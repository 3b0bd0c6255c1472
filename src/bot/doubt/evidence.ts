/**
 * How an order in doubt is settled: a pure judgement of what the API shows against what the ledger
 * knows. Once an attempt may have reached the service, no refusal of a later attempt proves the
 * first was not charged (a service that forgot the key refuses a replay as it would a new order), so
 * the verdict rests on evidence: cards the order pulled in the vault, the account's pack count for
 * the day, and the purchase report's rows of the account's own user id. A pack order is never
 * re-sent: a service that forgot its key would run the re-send as a new order and charge again.
 * Evidence that it was not charged closes it (the strategy decides afresh, under a new key);
 * evidence that cannot decide parks it, and it is read again, never sent, until the evidence can.
 */
import type { VaultEntry } from '../../api/schemas.js';
import type { Intent, Ledger } from '../../store/ledger.js';
import { boundCents, quantityOf } from '../../store/order-facts.js';

export interface EvidenceOptions {
  /** After the last send, how long the service may still be running the order (ms). */
  settleMs: number;
  /** Allowed difference between our clock and the service's timestamps (ms). */
  skewMs: number;
  /** Past this time after the first send a card order's key is no longer re-sent (ms). */
  resendHorizonMs: number;
}

export const DEFAULT_EVIDENCE_OPTIONS: Readonly<EvidenceOptions> = Object.freeze({
  settleMs: 60_000,
  skewMs: 60_000,
  resendHorizonMs: 60 * 60_000,
});

export interface Evidence {
  /** Vault entries no ledger pull knows, of the intent's category, pulled inside its window. */
  unknownPulls: readonly VaultEntry[];
  /** From `GET /account`, when it could be read. */
  account?: {
    packsToday: number;
    /** Start of the service's day (`resets_at` − 24 h), ms. */
    dayStart: number;
    /** Packs of this account's confirmed orders booked since `dayStart`. */
    ledgerPacksToday: number;
  };
  /**
   * From the purchase report, when the account's user id is known and the report readable: what its
   * rows of the intent's pack type in the window charged beyond the orders the ledger booked there.
   */
  report?: { unexplainedCents: number };
  /**
   * Other pack orders of the account sent and not settled (order-facts.ts `isSentUnsettled`: their
   * pulls and packs would be mistaken for ours). Card purchases leave no pull time, no pack count
   * and no report row: they do not count.
   */
  otherUnresolved: number;
}

export type Verdict =
  | { kind: 'charged'; pulls: readonly VaultEntry[]; by: string }
  | { kind: 'not_charged'; by: string }
  | { kind: 'wait'; until: number; why: string }
  | { kind: 'resend'; why: string }
  | { kind: 'park'; why: string };

/** What a pack order in doubt can be judged: never a re-send (see above). */
export type PackVerdict = Exclude<Verdict, { kind: 'resend' }>;

export interface Window {
  from: number;
  to: number;
  /** Before this instant the order may still be running on the service. */
  settledAt: number;
}

/** The interval the order's pulls and report row can carry, and when the order must have ended. */
export function intentWindow(intent: Intent, o: EvidenceOptions): Window {
  const firstSent = intent.firstSentAt ?? intent.createdAt;
  const lastSent = intent.lastSentAt ?? intent.updatedAt;
  const settledAt = lastSent + o.settleMs;
  return {
    from: firstSent - o.skewMs,
    to: Math.max(settledAt, intent.lastAnswerAt ?? 0) + o.skewMs,
    settledAt,
  };
}

export function judge(intent: Intent, ev: Evidence, now: number, o: EvidenceOptions): PackVerdict {
  const quantity = quantityOf(intent);
  const win = intentWindow(intent, o);
  const pulls = ev.unknownPulls.length;
  const acct = ev.account;
  const alone = ev.otherUnresolved === 0;
  // The send fell inside the service's current day: its pack count would include the order.
  const sameDay = acct !== undefined && win.from >= acct.dayStart;
  const dayCountsIt = alone && sameDay && acct.packsToday === acct.ledgerPacksToday + quantity;
  const dayExcludesIt = alone && sameDay && acct.packsToday === acct.ledgerPacksToday;

  if (alone && pulls === quantity)
    return { kind: 'charged', pulls: ev.unknownPulls, by: `evidence: ${pulls} pull(s) in the vault` };
  if (pulls >= 1 && pulls <= quantity && dayCountsIt)
    return {
      kind: 'charged',
      pulls: ev.unknownPulls,
      by: `evidence: packs_today ${acct!.packsToday} and ${pulls} pull(s) in the vault`,
    };
  // The charge nothing else explains must be this order's bound: its planned price × its packs.
  const orderCents = boundCents(intent);
  if (alone && ev.report && orderCents > 0 && ev.report.unexplainedCents === orderCents && pulls <= quantity)
    return { kind: 'charged', pulls: ev.unknownPulls, by: 'evidence: purchase report row of this account' };

  if (now < win.settledAt)
    return { kind: 'wait', until: win.settledAt, why: 'the order may still be running' };

  if (pulls === 0 && dayExcludesIt && (ev.report === undefined || ev.report.unexplainedCents === 0))
    return { kind: 'not_charged', by: `evidence: packs_today ${acct!.packsToday} and no pull in the vault` };
  if (pulls === 0 && alone && ev.report?.unexplainedCents === 0 && (acct === undefined || !sameDay))
    return { kind: 'not_charged', by: 'evidence: no purchase report row and no pull in the vault' };

  return { kind: 'park', why: undecided(ev, quantity, alone, sameDay) };
}

/** Why the evidence read cannot settle the order either way (said in status and the log). */
function undecided(ev: Evidence, quantity: number, alone: boolean, sameDay: boolean): string {
  const pulls = ev.unknownPulls.length;
  if (!alone) return `${ev.otherUnresolved} other order(s) in doubt share its window`;
  if (pulls > quantity) return `${pulls} unknown pull(s) in its window, more than its ${quantity}`;
  if (pulls > 0)
    return `${pulls} of its ${quantity} pull(s) in the vault and packs_today does not confirm it`;
  if (ev.account === undefined) return 'no pull in the vault; the account could not be read';
  if (!sameDay)
    return ev.report === undefined
      ? 'no pull in the vault; sent before the service day began and the purchase report is not readable'
      : 'no pull in the vault but the purchase report shows a charge nothing explains';
  return `no pull in the vault but packs_today ${ev.account.packsToday} is not the ledger's ${ev.account.ledgerPacksToday}`;
}

/**
 * A card purchase in doubt. A bought card can only be in our vault (nothing moves it out but our own
 * sell-back, listing or shipping, none of which we do to a card we do not know), so once the order
 * must have ended the vault settles it: the card there under a purchase id the ledger does not
 * know → charged; absent → not charged. With the card found, a re-send of a key the service still
 * knows is preferred (inside the horizon, even while opening is paused: it cannot buy the card
 * again): its replay carries the exact price paid (evidence only bounds it by `max_price`).
 */
export function judgeCard(
  intent: Intent,
  found: VaultEntry | undefined,
  now: number,
  o: EvidenceOptions,
  mayResend: boolean,
): Verdict {
  const win = intentWindow(intent, o);
  if (now < win.settledAt && !found)
    return { kind: 'wait', until: win.settledAt, why: 'the card purchase may still be running' };
  const firstSent = intent.firstSentAt ?? intent.createdAt;
  // With the card in our vault a re-send cannot buy anything (the service no longer sells it), so
  // it goes out even while opening is paused or stopping: its replay is the only exact price.
  const canResend =
    (mayResend || found !== undefined) && !intent.keyForgotten && now - firstSent <= o.resendHorizonMs;
  if (found) {
    if (canResend) return { kind: 'resend', why: 'the card is in the vault; a replay gives the price paid' };
    return { kind: 'charged', pulls: [found], by: 'evidence: the card is in the vault' };
  }
  return { kind: 'not_charged', by: 'evidence: the card is not in the vault after the order ended' };
}

/**
 * A vault card that may be a pull of an order of ours the ledger has not booked: pulled (a
 * pull time), under a pull_id the ledger does not know, and not a card we hold. A bought card may
 * carry a pull time and a pull_id of the service's own (the spec does not show how it is named:
 * sell-ids.ts); it is ours, never a stray pull.
 */
export function isUnknownPull(ledger: Pick<Ledger, 'hasPull' | 'ownedPullByCard'>, v: VaultEntry): boolean {
  return (
    v.pull_id !== null &&
    v.pulled_at !== null &&
    !ledger.hasPull(v.pull_id) &&
    !ledger.ownedPullByCard(v.card_id)
  );
}
