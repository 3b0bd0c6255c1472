/**
 * What `decideListing` is asked about an active listing, built in one place for the listing watch
 * (which acts on it) and the read API's listings (which show what it will do), so the dashboard's
 * prices and deadlines cannot drift from the watch's again: the card's value is the last vault
 * read's (the API has no listing read), not its value at the pull.
 */

import type { VaultEntry } from '../../api/schemas.js';
import { type Cents, toCents } from '../../core/money.js';
import type { ListingRow, PullRow } from '../../store/ledger.js';
import type { ListingView } from '../../strategy/decide-listing.js';
import { lockEnds, SPEC_SELL_BACK_RULES } from '../../strategy/market-laws.js';

/** What a vault read showed of a listed card: the part of the entry a listing decision reads. */
export interface VaultMark {
  valueCents: Cents;
  /** The entry's `pulled_at` (ms), null when the service left it out. */
  pulledAt: number | null;
}

export function vaultMark(entry: VaultEntry): VaultMark {
  return {
    valueCents: toCents(entry.value),
    pulledAt: entry.pulled_at ? Date.parse(entry.pulled_at) : null,
  };
}

export interface ListingInput {
  view: ListingView;
  /** The card's value the view is built on; null when neither a vault read nor the pull gives one. */
  valueCents: Cents | null;
}

/**
 * The decision input of `listing`, with its pull and the card's last vault mark. Without a mark
 * (no vault read since the listing was seen, e.g. just after a start) the value at the pull stands
 * in, which is what the watch would read of a card whose value has not moved.
 */
export function listingInput(
  listing: ListingRow,
  pull: PullRow | undefined,
  mark: VaultMark | undefined,
): ListingInput {
  const valueCents = mark?.valueCents ?? pull?.valueCents ?? null;
  const market = valueCents ?? listing.priceCents;
  const acquiredAt = mark?.pulledAt ?? pull?.pulledAt ?? listing.createdAt;
  return {
    valueCents,
    view: {
      priceCents: listing.priceCents,
      listedAt: listing.createdAt,
      pricedAt: listing.repricedAt ?? listing.createdAt,
      marketValueCents: market,
      // While listed the vault shows no offer; during the lock its basis is the value at the pull,
      // or for a bought card the lower of its price and its value at purchase (spec).
      basisValueCents: pull ? lockBasisCents(pull) : market,
      lockedValueUntil: lockEnds(acquiredAt, SPEC_SELL_BACK_RULES),
    },
  };
}

/** What a holding's sell-back offer is locked to until its value lock ends. */
function lockBasisCents(pull: Pick<PullRow, 'valueCents' | 'origin' | 'pricePaidCents'>): Cents {
  return pull.origin === 'purchase' && pull.pricePaidCents !== null
    ? Math.min(pull.pricePaidCents, pull.valueCents)
    : pull.valueCents;
}

/**
 * The last vault read's marks of an account's listed cards, kept by the listing watch for the
 * read API (an account bot's last reads): only the cards listed at that read, so it stays small.
 */
export class ListingMarks {
  private byCard = new Map<string, VaultMark>();

  /** Replaces the marks with what `vault` shows of the cards of `listings`. */
  note(vault: ReadonlyMap<string, VaultEntry>, listings: readonly ListingRow[]): void {
    const next = new Map<string, VaultMark>();
    for (const l of listings) {
      const entry = vault.get(l.cardId);
      if (entry) next.set(l.cardId, vaultMark(entry));
    }
    this.byCard = next;
  }

  get(cardId: string): VaultMark | undefined {
    return this.byCard.get(cardId);
  }
}
