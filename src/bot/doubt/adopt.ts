/**
 * No stranded pull: a vault card the ledger does not know, whose pull falls inside the send window
 * of one of our pack attempts that could have charged without our knowing (a re-sent order, one settled
 * by evidence or by an operator, one closed as failed after it may have reached the service), is
 * ours. While an order of the account is still in doubt, cards pulled since its first send are left
 * to the resolver, which settles that order from them. It is adopted into that order — or, when that order already holds all its pulls, booked as
 * the extra charge it is — and the sell side decides it at once. Other unknown cards (opened in the
 * app by the account's owner) are reported and left alone, unless the config opts in
 * (`orders.adopt_unknown_cards`): then they are taken over at zero cost and traded by the strategy
 * (a card the owner listed is left alone).
 */
import type { VaultEntry } from '../../api/schemas.js';
import type { Intent, Ledger, NewPull } from '../../store/ledger.js';
import { categoryOf, chargeAtBound, isSentUnsettled, quantityOf } from '../../store/order-facts.js';
import type { AccountContext } from '../common/context.js';
import { DEFAULT_EVIDENCE_OPTIONS, type EvidenceOptions, intentWindow, isUnknownPull } from './evidence.js';
import { pullOf } from './in-doubt.js';

export interface AdoptionReport {
  /** Pulls adopted into our orders. */
  adopted: string[];
  /** Card ids of vault cards that are not ours (left alone). */
  unknown: string[];
}

/** An attempt that was sent more than once could have been charged more than once. */
const mayBeChargedTwice = (i: Intent): boolean => i.attempts > 1 || i.keyForgotten;

/** An attempt whose pulls may be in the vault without the ledger having them. */
function mayHaveStrays(i: Intent): boolean {
  if (i.firstSentAt === null) return false;
  if (i.state === 'confirmed') return mayBeChargedTwice(i) || i.settledBy !== null;
  return i.state === 'failed' && i.delivered;
}

/**
 * The attempt a stray card most plausibly came from, among those whose send window holds its pull
 * time and that can take it: one with room left for pulls (a settled order missing some; one closed
 * as failed, wrongly, counts its whole quantity; cards given to it in this pass count against it),
 * the most room first; else one sent more than once (a second charge of it), the latest first. An
 * attempt sent once was charged at most once, so it never gets an extra charge. Windows overlap by
 * the clock skew: "the first window that fits" would hand one order's pulls to another.
 */
function ownerOf(
  candidates: readonly Intent[],
  v: VaultEntry,
  at: number,
  ctx: { ledger: Ledger; assigned: ReadonlyMap<Intent, VaultEntry[]>; evidence: EvidenceOptions },
): Intent | undefined {
  const room = (i: Intent): number => {
    const order = ctx.ledger.orderForIntent(i.key);
    const booked = order ? ctx.ledger.pullsOfOrder(order.checkoutId).length : 0;
    return quantityOf(i) - booked - (ctx.assigned.get(i)?.length ?? 0);
  };
  const fits = candidates.filter((i) => {
    const w = intentWindow(i, ctx.evidence);
    const inWindow = at >= w.from && at <= w.to && categoryOf(i) === v.item.category;
    return inWindow && (room(i) > 0 || mayBeChargedTwice(i));
  });
  const sentAt = (i: Intent) => i.firstSentAt ?? i.createdAt;
  return fits.sort((a, b) => Math.max(0, room(b)) - Math.max(0, room(a)) || sentAt(b) - sentAt(a))[0];
}

export function adoptStrays(
  o: AccountContext,
  vault: ReadonlyMap<string, VaultEntry>,
  readStart: number,
  opts: { adoptUnknown?: boolean; evidence?: Partial<EvidenceOptions> } = {},
): AdoptionReport {
  const evidence = { ...DEFAULT_EVIDENCE_OPTIONS, ...opts.evidence };
  const { ledger, log, account } = o;
  const strays = [...vault.values()].filter((v) => isUnknownPull(ledger, v));
  if (strays.length === 0) return { adopted: [], unknown: [] };
  // Pack orders only: a pulled card never comes from a card purchase (a bought card is not a pull
  // and has no pull time), and a card order booked with pack pulls would be charged at its
  // max_price for a card it never bought.
  const mine = ledger.recentIntents().filter((i) => i.account === account && i.operation === 'pack');
  const candidates = mine.filter(mayHaveStrays);
  // An order sent and not settled (in doubt, or on the wire) is the resolver's or its answer's to
  // settle from these very cards (in-doubt.ts).
  const unresolved = mine.filter(isSentUnsettled);
  const byIntent = new Map<Intent, VaultEntry[]>();
  const unknown: string[] = [];
  strays.sort((a, b) => Date.parse(a.pulled_at!) - Date.parse(b.pulled_at!));
  for (const v of strays) {
    const at = Date.parse(v.pulled_at!);
    // A card pulled while this read was under way may be an order being confirmed right now.
    if (at >= readStart) continue;
    if (unresolved.some((i) => at >= intentWindow(i, evidence).from)) continue;
    const owner = ownerOf(candidates, v, at, { ledger, assigned: byIntent, evidence });
    if (!owner) unknown.push(v.card_id);
    else byIntent.set(owner, [...(byIntent.get(owner) ?? []), v]);
  }
  const adopted: string[] = [];
  for (const [intent, entries] of byIntent) {
    const pulls: NewPull[] = entries.map(pullOf);
    const quantity = quantityOf(intent);
    const order = ledger.orderForIntent(intent.key);
    const why = `pulled inside the send window of ${intent.key}`;
    // The order's own missing pulls first; the rest are further charges of the same body, one
    // order each (`quantity` pulls a charge, in pull order), so every charge is an order.
    let rest = pulls;
    if (order) {
      const room = Math.max(0, quantity - ledger.pullsOfOrder(order.checkoutId).length);
      if (room > 0) ledger.adoptPulls(order.checkoutId, rest.slice(0, room));
      rest = rest.slice(room);
    } else {
      const own = rest.slice(0, quantity);
      ledger.confirmBySettlement(intent.key, {
        ...chargeAtBound(intent),
        pulls: own,
        by: `evidence: ${own.length} pull(s) ${why}`,
      });
      rest = rest.slice(quantity);
    }
    for (let i = 0; i < rest.length; i += quantity) {
      const charge = rest.slice(i, i + quantity);
      ledger.bookExtraCharge(intent.key, charge, `evidence: ${charge.length} pull(s) ${why}`);
    }
    log.warn({ intent: intent.key, pulls: pulls.length }, 'adopted vault cards pulled by one of our orders');
    adopted.push(...pulls.map((p) => p.pullId));
  }
  if (opts.adoptUnknown && unknown.length > 0) {
    const foreign = unknown.map((id) => vault.get(id)!);
    const categoryOf = (v: VaultEntry) => String(v.item.category ?? 'unknown');
    for (const category of new Set(foreign.map(categoryOf))) {
      const pulls = foreign.filter((v) => categoryOf(v) === category && !v.listed).map(pullOf);
      ledger.adoptForeign(account, category, pulls);
      adopted.push(...pulls.map((p) => p.pullId));
    }
    log.warn(
      { cards: foreign.length },
      'adopted vault cards opened outside the bot (orders.adopt_unknown_cards)',
    );
    return { adopted, unknown: foreign.filter((v) => v.listed).map((v) => v.card_id) };
  }
  return { adopted, unknown };
}
