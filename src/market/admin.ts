/**
 * The simulator's admin side, outside the partner API: shipping a held card out, the finished
 * orders by idempotency key (for audits), balances, other users' listings, and the JSON summary of
 * the whole state that `GET /sim/v1/state` serves.
 */
import { NotFoundError } from '../api/errors.js';
import type { Category } from '../api/schemas.js';
import { iso } from '../core/clock.js';
import { type Cents, toUsd } from '../core/money.js';
import { audit } from './audit.js';
import type { Faults } from './faults.js';
import { orderKey } from './idempotency.js';
import { chaseActive, drawable } from './inventory.js';
import { packsToday } from './limits.js';
import type { MarketState } from './state.js';

/** A finished order: the checkout its key produced and its pulls (card orders: the sale and card). */
export interface FinishedOrder {
  account: string;
  key: string;
  checkout_id: string;
  pull_ids: string[];
  /** Card orders: the sale (ref of its ledger entries) and the card. */
  transaction_id?: string;
  card_id?: string;
  /** Card orders: the bought card's pull_id in the vault and sell-back (`rules.purchased_card_pull_id`). */
  pull_id?: string;
}

/** A held card leaves the vault for good (shipping is not part of the partner API). */
export function ship(s: MarketState, cardId: string): { card_id: string; shipped: true } {
  const c = s.inv.byId.get(cardId);
  if (c?.loc !== 'vault') throw new NotFoundError(`card '${cardId}' is not in a vault (unlisted)`);
  c.loc = 'shipped';
  return { card_id: c.id, shipped: true };
}

/** Finished orders, including those whose answer never reached the client. */
export function finishedOrders(s: MarketState): FinishedOrder[] {
  const pullIdOf = new Map<string, string>();
  for (const a of s.acquisitions.values())
    if (a.transactionId !== undefined) pullIdOf.set(a.transactionId, a.id);
  const out = [];
  for (const [id, o] of s.orders) {
    if (o.state !== 'finished') continue;
    const { account, key } = orderKey(id);
    const r = o.response as {
      checkout_id?: string;
      pulls?: { pull_id: string }[];
      transaction_id?: string;
      card_id?: string;
    };
    if (typeof r?.checkout_id !== 'string') continue;
    out.push({
      account,
      key,
      checkout_id: r.checkout_id,
      pull_ids: (r.pulls ?? []).map((p) => p.pull_id),
      ...(typeof r.transaction_id === 'string'
        ? {
            transaction_id: r.transaction_id,
            card_id: String(r.card_id),
            pull_id: pullIdOf.get(r.transaction_id) ?? r.transaction_id,
          }
        : {}),
    });
  }
  return out;
}

export function balanceCents(s: MarketState, accountId: string): Cents {
  const a = s.accounts.get(accountId);
  if (!a) throw new Error(`no account '${accountId}'`);
  return a.balanceCents;
}

/** Other users' marketplace listings (not visible in the partner API, which only lists the shop). */
export function otherListings(
  s: MarketState,
  category?: Category,
): { listing_id: string; card_id: string; price: number; title: string }[] {
  const out = [];
  for (const slot of s.inv.listings) {
    const c = s.inv.cards[slot]!;
    if (c.listing?.seller !== null || (category && c.category !== category)) continue;
    out.push({
      listing_id: c.listing.id,
      card_id: c.id,
      price: toUsd(c.listing.priceCents),
      title: c.listing.title,
    });
  }
  return out;
}

/** A JSON-able summary of the whole state at `now` (dynamics already applied). */
export function dump(s: MarketState, faults: Faults, now: number): Record<string, unknown> {
  const locs: Record<string, number> = {};
  for (const c of s.inv.cards) if (c) locs[c.loc] = (locs[c.loc] ?? 0) + 1;
  return {
    now: iso(now),
    seed: s.seed,
    world: s.world.name,
    accounts: [...s.accounts.values()].map((a) => ({
      id: a.id,
      username: a.username,
      balance: toUsd(a.balanceCents),
      starting_balance: toUsd(a.initialCents),
      packs_today: packsToday(a, now),
      internal: a.internal,
    })),
    keys: [...s.keys.values()].map((k) => ({
      name: k.name,
      account: k.accountId,
      disabled: k.disabled,
      last_purchase_at: k.lastPurchaseAt === null ? null : iso(k.lastPurchaseAt),
    })),
    cards_by_location: locs,
    cards_released: s.inv.releasedTotal,
    released_ids_remembered: s.inv.goneIds.size,
    category_value_index: { ...s.inv.index },
    pools: s.inv.pools.map((p) => ({
      category: p.category,
      pack_type: p.spec.pack_type,
      available: p.spec.available && drawable(p, now),
      chase_active: chaseActive(p, now),
      bands: p.bands.map((b) => ({
        bucket_id: b.spec.bucket_id,
        cards: b.bag.count,
        initial: b.initialCount,
      })),
    })),
    listings: [...s.inv.listings].map((slot) => {
      const c = s.inv.cards[slot]!;
      return {
        listing_id: c.listing!.id,
        card_id: c.id,
        category: c.category,
        price: toUsd(c.listing!.priceCents),
        title: c.listing!.title,
        seller: c.listing!.seller ?? 'other',
      };
    }),
    orders: [...s.orders.entries()].map(([k, o]) => ({ account: orderKey(k).account, state: o.state })),
    report_rows: s.report.n,
    pack_openings: s.report.openings,
    ledger_entries: s.ledger.length,
    pending_proceeds: s.pendingProceeds.map((p) => ({
      account: p.accountId,
      listing_id: p.listingId,
      amount: toUsd(p.priceCents),
      at: iso(p.at),
    })),
    faults: faults.list(),
    audit: audit(s),
  };
}
