/**
 * Compares the service with the ledger, at start and periodically: cards the ledger thinks we own
 * that the vault no longer has (sold, listed or shipped elsewhere), vault cards the ledger does not
 * know, and the balance against the one the ledger expects. Drift is logged and exported; the
 * ledger is corrected only where the service is authoritative (a card gone is gone).
 */
import { CATEGORIES, type Category, type VaultEntry } from '../../api/schemas.js';
import { toCents } from '../../core/money.js';
import { FailureOrder } from '../common/failure-order.js';
import { readVault } from '../common/vault.js';
import { adoptStrays } from '../doubt/adopt.js';
import type { EvidenceOptions } from '../doubt/evidence.js';
import { type CashBooksOptions, creditFoundSales, readBalance } from './cash-books.js';
import { type ListingWatchOptions, type WatchResult, watchListings } from './listing-watch.js';
import { learnSellIds } from './sell-ids.js';

export interface ReconcileOptions extends ListingWatchOptions, CashBooksOptions {
  /** Cards whose delisting failed, kept across passes (the sell side's `delistFailures`). */
  delistFailures?: FailureOrder;
  /** Take over vault cards from no order of ours (the owner's): `orders.adopt_unknown_cards`. */
  adoptUnknownCards?: boolean;
  /** The send windows of our attempts (settle time, clock skew), as orders in doubt are judged. */
  evidence?: Partial<EvidenceOptions>;
}

export interface ReconcileReport {
  missing: string[];
  /** Vault cards that are not ours (opened in the app by the owner): reported, left alone. */
  unknown: string[];
  /** Pulls of our own orders found in the vault and adopted (sold or listed by the strategy). */
  adopted: string[];
  balanceDriftCents: number;
  listings: WatchResult;
  /** Listings on the service the ledger did not know, delisted. */
  strayListings: number;
}

/**
 * Runs `fn` exclusive with the sell side's pass (`SellSide.exclusive`): the listing watch and the
 * corrections change the same pulls and listings as a sell pass.
 */
export type Exclusive = <T>(fn: () => Promise<T>) => Promise<T>;

const alone: Exclusive = (fn) => fn();

/**
 * One reconciliation. The reads (vault, account) come first, outside `exclusive`: a read may wait
 * for the read budget (src/api/pacing.ts), and a sell pass must never wait behind it (a pull's
 * sell-back window is closing). Then, exclusive, what the reads show is compared with the ledger;
 * whatever changed since they began (a pull sold back or listed, a listing made, a balance
 * answered by a sell-back) is left to the next pass.
 */
export async function reconcile(o: ReconcileOptions, exclusive: Exclusive = alone): Promise<ReconcileReport> {
  const categories = vaultCategories(o);
  const readStart = o.clock.now();
  const vault = await readVault(o.api, categories);
  const known = o.ledger.latestBalance(o.account)?.id;
  const accountSent = o.clock.now();
  const account = await o.api.getAccount();
  const accountAt = o.clock.now();
  // Without the sell side's order of failed delistings, this pass starts one of its own.
  const failures = o.delistFailures ?? new FailureOrder();
  return exclusive(async () => {
    learnSellIds(o, vault);
    const listings = await watchListings(o, vault, readStart, failures);
    const { adopted, unknown } = adoptStrays(o, vault, readStart, {
      adoptUnknown: o.adoptUnknownCards === true,
      ...(o.evidence ? { evidence: o.evidence } : {}),
    });
    const { missing } = diffVault(o, vault, readStart);
    const strayListings = await delistStray(o, vault, readStart, failures);
    listings.proceedsCents += creditFoundSales(o, readStart);
    const drift = balanceDrift(o, toCents(account.balance), accountSent, accountAt, known, listings);
    o.metrics.reconcileDrift(drift, missing.length + unknown.length + listings.drift + strayListings);
    o.metrics.vaultUnknownCards(unknown.length);
    if (missing.length + unknown.length > 0)
      o.log.warn({ missing: missing.length, unknown: unknown.length }, 'vault differs from the ledger');
    return { missing, unknown, adopted, balanceDriftCents: drift, listings, strayListings };
  });
}

/**
 * The reported balance (read at `accountAt`) against the books (cash-books.ts): a rise credits the
 * sales this pass found, the rest is an adjustment. The ledger's latest balance must be the one it
 * had when the read was sent (`known`, its row): one learnt since (a sell-back's answer) may be
 * newer than the read, so the comparison waits for the next pass and that balance stays the
 * ledger's. Returns what the books could not attribute.
 */
function balanceDrift(
  o: ReconcileOptions,
  reported: number,
  accountSent: number,
  accountAt: number,
  known: number | undefined,
  listings: WatchResult,
): number {
  o.metrics.balance(reported);
  if (o.ledger.latestBalance(o.account)?.id !== known) return 0;
  const obs = readBalance(o, reported, 'reconcile', accountSent, accountAt);
  if (!obs) return 0;
  listings.proceedsCents += obs.attributedCents;
  return obs.adjustmentCents;
}

/**
 * A card listed on the service that the ledger does not have listed (a listing request whose
 * answer was lost): it can be neither sold back nor managed, so it is delisted and the pull goes
 * on by its decision.
 */
async function delistStray(
  o: ReconcileOptions,
  vault: ReadonlyMap<string, VaultEntry>,
  readStart: number,
  failures: FailureOrder,
) {
  let n = 0;
  const stray = o.ledger
    .cardHoldings(o.account)
    .filter(
      (pull) =>
        pull.status !== 'listed' && pull.statusAt < readStart && vault.get(pull.cardId)?.listed === true,
    );
  for (const pull of failures.sort(stray, (p) => p.cardId)) {
    const failed = await failures.attempt(pull.cardId, () => o.api.deleteListing({ card_id: pull.cardId }));
    if (failed) {
      o.log.warn(
        { pull: pull.pullId, code: failed.code },
        `could not delist a stray listing: ${failed.message}`,
      );
      // The rest at the next pass (see listing-watch.ts).
      break;
    }
    o.log.warn({ pull: pull.pullId, status: pull.status }, 'delisted a listing the ledger did not know');
    n++;
  }
  return n;
}

/**
 * Pulls that arrived or changed since the vault read began are skipped: an order confirmed while
 * the read was under way is not in it yet, and that is not drift.
 */
function diffVault(o: ReconcileOptions, vault: ReadonlyMap<string, VaultEntry>, readStart: number) {
  const missing: string[] = [];
  // Cards only: sealed packs are not promised to appear in the vault, nothing to compare.
  for (const pull of o.ledger.cardHoldings(o.account)) {
    // A sell-back whose answer was lost leaves the card gone and the pull waiting for its sale: the
    // sweep re-sends it and the service answers `already_sold` with the payout. Marking it gone here
    // would lose the payout; a card that went another way fails that sell-back and is judged next.
    if (pull.status === 'sell_pending') continue;
    if (pull.statusAt >= readStart || pull.pulledAt >= readStart) continue;
    if (vault.has(pull.cardId)) continue;
    if (o.ledger.activeListingForCard(pull.cardId)) continue;
    o.ledger.markPullGone(pull.pullId, 'gone');
    o.log.warn(
      { pull: pull.pullId, card: pull.cardId, was: pull.status },
      'card left the vault outside the bot',
    );
    missing.push(pull.pullId);
  }
  return { missing };
}

/**
 * Every category a card of ours can be in: the strategy's packs, its shops when it buys cards,
 * and wherever the ledger still holds something (a reloaded strategy may have dropped a category
 * whose cards are still listed: an unread category would make them look sold or gone).
 */
export function vaultCategories(o: Pick<ReconcileOptions, 'strategy' | 'ledger' | 'account'>): Category[] {
  const out = new Set<string>(o.strategy.packs.categories);
  if (o.strategy.cards.enabled) for (const c of o.strategy.cards.categories) out.add(c);
  for (const c of o.ledger.holdingCategories(o.account)) out.add(c);
  return CATEGORIES.filter((c) => out.has(c));
}
