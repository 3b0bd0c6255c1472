/**
 * Watches our marketplace listings through the vault (the API has no listing read): a listed card
 * gone from the vault sold, so its proceeds are recorded; one still listed is kept, repriced
 * (delist + list again at the new price, same ledger listing) or delisted and sold back, as
 * `decideListing` says, timed against the sell-back value lock.
 */

import { isPartnerApiError } from '../../api/errors.js';
import type { VaultEntry } from '../../api/schemas.js';
import { toCents, toUsd } from '../../core/money.js';
import type { ListingRow } from '../../store/ledger.js';
import { decideListing } from '../../strategy/decide-listing.js';
import type { AccountContext } from '../common/context.js';
import type { FailureOrder } from '../common/failure-order.js';
import { type ListingMarks, listingInput, vaultMark } from './listing-input.js';

export interface ListingWatchOptions extends AccountContext {
  /** Where the values this pass read are kept for the read API (the account bot's). */
  listingMarks?: ListingMarks;
}

export interface WatchResult {
  filled: number;
  repriced: number;
  delisted: number;
  /** Listings the vault shows unlisted though the ledger has them active (delisted elsewhere). */
  drift: number;
  /** Proceeds credited to sales in this pass (by the reconciliation's balance reading). */
  proceedsCents: number;
}

/**
 * One pass over the active listings with a fresh vault read, begun at `readStart`. Returns what
 * changed. A listing made or repriced since the read began is not in it yet: the next pass has it.
 * Listings whose delisting failed (`failures`, kept across passes) are acted on after the others.
 */
export async function watchListings(
  o: ListingWatchOptions,
  vault: ReadonlyMap<string, VaultEntry>,
  readStart: number,
  failures: FailureOrder,
): Promise<WatchResult> {
  const result: WatchResult = { filled: 0, repriced: 0, delisted: 0, drift: 0, proceedsCents: 0 };
  const still: [ListingRow, VaultEntry][] = [];
  const active = o.ledger.activeListings(o.account);
  // Before anything is skipped: a listing made since the read began is still shown at its value.
  o.listingMarks?.note(vault, active);
  // What the vault read shows (fills, listings gone) is booked in one commit: a pass over many
  // listings does not hold the event loop for one fsync each.
  o.ledger.atomically(() => {
    for (const listing of active) {
      if (Math.max(listing.createdAt, listing.repricedAt ?? 0) >= readStart) continue;
      const entry = vault.get(listing.cardId);
      if (!entry) {
        // Its proceeds are what the balance gained for it (cash-books.ts), not an assumed fee.
        o.ledger.recordListingFill(listing.listingId, null);
        o.log.info({ card: listing.cardId, price: toUsd(listing.priceCents) }, 'listing sold');
        result.filled++;
      } else if (!entry.listed) {
        o.ledger.recordListingUpdate(listing.listingId, { delisted: true });
        o.log.warn(
          { card: listing.cardId },
          'listing no longer active on the service; deciding the card again',
        );
        result.drift++;
      } else still.push([listing, entry]);
    }
  });
  // A failing service ends the pass at its first failed write: the rest wait for the next pass,
  // not each for its own retries while the sell side stays locked.
  for (const [listing, entry] of failures.sort(still, ([l]) => l.cardId))
    if (!(await actOn(o, listing, entry, result, failures))) break;
  o.metrics.listingsActive(o.ledger.activeListings(o.account).length);
  return result;
}

/** Keeps, reprices or delists one listing; false when a request failed (the service is failing). */
async function actOn(
  o: ListingWatchOptions,
  listing: ListingRow,
  entry: VaultEntry,
  result: WatchResult,
  failures: FailureOrder,
): Promise<boolean> {
  const pull = listing.pullId ? o.ledger.getPull(listing.pullId) : undefined;
  const now = o.clock.now();
  const { view } = listingInput(listing, pull, vaultMark(entry));
  const decision = decideListing(view, o.strategy, now);
  if (decision.action === 'keep') return true;
  const failed = await failures.attempt(listing.cardId, () =>
    o.api.deleteListing({ card_id: listing.cardId }),
  );
  if (failed) {
    o.log.warn({ card: listing.cardId, code: failed.code }, `delist failed, will retry: ${failed.message}`);
    return false;
  }
  if (decision.action === 'delist_and_sell_back') {
    o.ledger.atomically(() => {
      o.ledger.recordListingUpdate(listing.listingId, { delisted: true });
      if (listing.pullId)
        o.ledger.recordDecision({ pullId: listing.pullId, action: 'sell_back', reason: decision.reason });
    });
    o.log.info({ card: listing.cardId, reason: decision.reason }, 'delisted to sell back');
    result.delisted++;
    return true;
  }
  try {
    const relisted = await o.api.createListing({
      card_id: listing.cardId,
      price: toUsd(decision.priceCents),
    });
    o.ledger.atomically(() => {
      o.ledger.recordListingUpdate(listing.listingId, { priceCents: toCents(relisted.price) });
      if (listing.pullId)
        o.ledger.recordDecision({
          pullId: listing.pullId,
          action: 'reprice',
          reason: decision.reason,
          priceCents: decision.priceCents,
        });
    });
    o.log.info({ card: listing.cardId, price: relisted.price, reason: decision.reason }, 'repriced');
    result.repriced++;
    return true;
  } catch (e) {
    if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
    // Delisted but not relisted: the card is back in the vault; decide it again (sell back or list).
    o.ledger.recordListingUpdate(listing.listingId, { delisted: true });
    o.log.warn({ card: listing.cardId, code: e.code }, `relisting failed: ${e.message}`);
    result.delisted++;
    return false;
  }
}
