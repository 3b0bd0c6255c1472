/**
 * The whole mutable state of a simulated market, built from a world and a seed. Everything the
 * service knows lives here, so reset is "build again" and a dump is a walk over it.
 */
import { CATEGORIES, type Category, type Scope } from '../api/schemas.js';
import { type Cents, toCents } from '../core/money.js';
import { Rng } from '../core/prng.js';
import type { Acquisition } from './buyback.js';
import { buildInventory, type Inventory, newCard } from './inventory.js';
import { emptyReport, type ReportLog } from './report-log.js';
import type { World } from './world-schema.js';

export interface AccountState {
  id: string;
  username: string;
  userId: string; // opaque id in the purchase report
  internal: boolean;
  initialCents: Cents;
  balanceCents: Cents;
  packDay: number;
  packsToday: number;
  cardDay: number;
  cardsToday: number;
  cardSpendTodayCents: Cents;
}

export interface KeyState {
  name: string;
  key: string;
  scopes: Set<Scope>;
  accountId: string | null;
  disabled: boolean;
  maxPacksPerDay: number;
  minSecondsBetween: number;
  lastPurchaseAt: number | null;
  lastCardPurchaseAt: number | null;
}

export type LedgerKind =
  | 'pack_purchase'
  | 'pack_refund'
  | 'card_purchase'
  | 'card_fee'
  | 'listing_sale'
  | 'seller_fee'
  | 'sell_back';

/** One money movement on an account; amount is signed cents (credit > 0). */
export interface LedgerEntry {
  seq: number;
  at: number;
  accountId: string;
  kind: LedgerKind;
  amountCents: Cents;
  ref: string;
}

/** A listing's proceeds not paid yet (`rules.listing_proceeds_delay_seconds`, proceeds.ts). */
export interface PendingProceeds {
  /** When the money reaches the seller's balance. */
  at: number;
  accountId: string;
  listingId: string;
  priceCents: Cents;
}

export interface Order {
  state: 'running' | 'finished';
  fingerprint: string;
  response: unknown;
}

export interface MarketState {
  world: World;
  seed: number;
  inv: Inventory;
  accounts: Map<string, AccountState>;
  keys: Map<string, KeyState>;
  orders: Map<string, Order>;
  acquisitions: Map<string, Acquisition>;
  ledger: LedgerEntry[];
  /** Listing proceeds not paid yet (`rules.listing_proceeds_delay_seconds`), in time order. */
  pendingProceeds: PendingProceeds[];
  report: ReportLog;
  otherUsers: string[];
  /** Draw stream (our pulls), dynamics stream, id stream: separate so one cannot shift another. */
  draws: Rng;
  dyn: Rng;
  ids: Rng;
  /** Dynamics have been applied up to this time. */
  syncedTo: number;
  nextEvent: Record<string, number>;
  nextTickAt: number;
}

export function buildState(world: World, seed: number, now: number): MarketState {
  const root = new Rng(seed);
  const ids = root.fork(1);
  const inv = buildInventory(world, seed);
  const accounts = new Map<string, AccountState>();
  for (const a of world.accounts) {
    const cents = toCents(a.balance);
    accounts.set(a.id, {
      id: a.id,
      username: a.username,
      userId: ids.uuid(),
      internal: a.internal,
      initialCents: cents,
      balanceCents: cents,
      packDay: -1,
      packsToday: 0,
      cardDay: -1,
      cardsToday: 0,
      cardSpendTodayCents: 0,
    });
  }
  const keys = new Map<string, KeyState>();
  for (const k of world.keys)
    keys.set(k.key, {
      name: k.name,
      key: k.key,
      scopes: new Set(k.scopes),
      accountId: k.account,
      disabled: k.disabled,
      maxPacksPerDay: k.max_packs_per_day ?? world.rules.max_packs_per_day,
      minSecondsBetween: k.min_seconds_between_purchases ?? world.rules.min_seconds_between_purchases,
      lastPurchaseAt: null,
      lastCardPurchaseAt: null,
    });
  const otherUsers = Array.from({ length: world.dynamics.other_users }, () => ids.uuid());
  const state: MarketState = {
    world,
    seed,
    inv,
    accounts,
    keys,
    orders: new Map(),
    acquisitions: new Map(),
    ledger: [],
    pendingProceeds: [],
    report: emptyReport(),
    otherUsers,
    draws: root.fork(2),
    dyn: root.fork(3),
    ids,
    syncedTo: now,
    nextEvent: {},
    nextTickAt: now + world.dynamics.tick_seconds * 1000,
  };
  seedOtherListings(state, now);
  return state;
}

/** Other users' marketplace listings, so a card purchase can hit `source: listing`. */
function seedOtherListings(state: MarketState, now: number): void {
  const d = state.world.dynamics;
  for (const category of CATEGORIES) {
    const shop = state.world.categories[category]?.shop;
    if (!shop || (shop.generate?.count ?? 0) + shop.cards.length === 0) continue;
    let have = 0;
    for (const slot of state.inv.listings) if (state.inv.cards[slot]!.category === category) have++;
    for (; have < d.others_listings_per_category; have++) addOtherListing(state, category, now);
  }
}

export function addOtherListing(state: MarketState, category: Category, now: number): void {
  const shop = state.world.categories[category]?.shop;
  if (!shop) return;
  const rng = state.dyn;
  const lo = toCents(shop.min_value);
  const hi = toCents(shop.max_value);
  const v = lo + Math.round(rng.next() * (hi - lo));
  const c = newCard(state.inv, category, 'card', v, {}, rng);
  c.anchorIndex = state.inv.index[category];
  c.loc = 'listed_other';
  c.listing = {
    id: state.ids.uuid(),
    priceCents: Math.max(1, Math.round(v * state.world.dynamics.others_listing_markup)),
    title: c.name,
    seller: null,
    createdAt: now,
  };
  state.inv.listings.add(c.slot);
}

export function record(
  state: MarketState,
  accountId: string,
  at: number,
  kind: LedgerKind,
  amountCents: Cents,
  ref: string,
): void {
  const acct = state.accounts.get(accountId);
  if (!acct) throw new Error(`no account ${accountId}`);
  acct.balanceCents += amountCents;
  state.ledger.push({ seq: state.ledger.length + 1, at, accountId, kind, amountCents, ref });
}
