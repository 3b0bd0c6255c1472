/**
 * What is the same for every account of one runner: each category's pack list and pools (unlinked
 * catalog reads: any key with `read:catalog` gets the same answer), each category's shop stock,
 * and each pool's pull
 * distribution (the scorer's strategy-free part). Read once for all accounts, through the account
 * that asks first, and held once; what differs per account (strategy, balance, budget, holdings)
 * is scored per account from the shared read.
 *
 * A category is read as one unit: its pack list, then every available pack's risk levels that a
 * registered strategy may open. An account asks for a read made at or after a time (`notBefore`):
 * the cached one when it is recent enough, else a new one; asks made while a read is on the wire
 * wait for that read. So 100 accounts cost one read per pool cadence, and an account on its own
 * reads exactly as it did alone.
 */
import type { PartnerApi } from '../../api/partner-api.js';
import type { Pack, PackPool, ShopCard } from '../../api/schemas.js';
import { EmptyPoolError, type PullDistribution, pullDistribution } from '../../strategy/distribution.js';
import { outOfScope } from '../../strategy/score.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import { PoolCardInterner } from './card-interner.js';

/** One category as read: its available packs and the pools of the risk levels wanted then. */
export interface CategoryRead {
  category: string;
  /** Available packs, by pack type. */
  packs: Map<string, Pack>;
  /** `pack_type/risk_level` → pool. */
  pools: Map<string, PackPool>;
  /** When the read was sent: it shows the service as of then or later (the runner's clock). */
  sentAt: number;
  /** When the read came back: the pool cadence counts from it. */
  readAt: number;
}

/** One category's shop stock as read: every page of `GET /catalog/cards`. */
export interface ShopRead {
  cards: readonly ShopCard[];
  sentAt: number;
  readAt: number;
}

interface Shared<T> {
  read: T | undefined;
  pending: Promise<T | undefined> | undefined;
}

interface Entry {
  read: CategoryRead | undefined;
  /** The read on the wire, if any. */
  pending: Promise<CategoryRead> | undefined;
  /** Cards held once across the category's pools and from one read to the next. */
  cards: PoolCardInterner;
}

export class SharedCatalog {
  private readonly categories = new Map<string, Entry>();
  /** The strategies whose pools are read, by account. */
  private readonly wanted = new Map<string, Strategy>();
  private readonly distributions = new WeakMap<PackPool, PullDistribution | EmptyPoolError>();
  private readonly shops = new Map<string, Shared<ShopRead>>();

  constructor(private readonly now: () => number) {}

  /** The account's strategy (again after a reload): its packs and risk levels are read from now on. */
  want(account: string, strategy: Strategy): void {
    this.wanted.set(account, strategy);
  }

  /**
   * `category` as read at or after `notBefore`, through `api` when a new read is needed. A read
   * that lacks a pool `strategy` may open (a strategy registered after it) is not recent enough.
   */
  async category(
    api: PartnerApi,
    category: string,
    strategy: Strategy,
    notBefore: number,
  ): Promise<CategoryRead> {
    const entry = this.entry(category);
    const fits = (r: CategoryRead | undefined): r is CategoryRead =>
      r !== undefined && r.sentAt >= notBefore && covers(r, strategy);
    if (fits(entry.read)) return entry.read;
    // Wait for the read on the wire (any account's); a new one only if it does not do.
    while (entry.pending) {
      const done = await entry.pending.catch(() => undefined);
      if (fits(done)) return done;
    }
    return this.readInto(entry, api, category, strategy);
  }

  /**
   * `category`'s shop stock as read at or after `notBefore`: the cached read, the one on the wire,
   * or a new one by `read` (the asking account's paced paging; undefined when it was stopped, and
   * then the next account to ask reads).
   */
  async shop(
    category: string,
    notBefore: number,
    read: () => Promise<readonly ShopCard[] | undefined>,
  ): Promise<ShopRead | undefined> {
    let entry = this.shops.get(category);
    if (!entry) {
      entry = { read: undefined, pending: undefined };
      this.shops.set(category, entry);
    }
    const fits = (r: ShopRead | undefined): r is ShopRead => r !== undefined && r.sentAt >= notBefore;
    if (fits(entry.read)) return entry.read;
    while (entry.pending) {
      const done = await entry.pending.catch(() => undefined);
      if (fits(done)) return done;
    }
    const sentAt = this.now();
    const shared = entry;
    const pending = read().then((cards) => {
      if (cards === undefined) return undefined;
      shared.read = { cards, sentAt, readAt: this.now() };
      return shared.read;
    });
    shared.pending = pending;
    const clear = () => {
      if (shared.pending === pending) shared.pending = undefined;
    };
    pending.then(clear, clear);
    return pending;
  }

  /**
   * The pool's pull distribution, computed once per pool read (it depends on the pool only). An
   * emptied pool's error is kept too: every account's every scoring pass meets it, and a new
   * error each time (its stack captured) took 1.6% of the loop's busy time with 30 accounts.
   */
  distribution(pool: PackPool): PullDistribution {
    let d = this.distributions.get(pool);
    if (d === undefined) {
      try {
        d = pullDistribution(pool);
      } catch (e) {
        if (!(e instanceof EmptyPoolError)) throw e;
        d = e;
      }
      this.distributions.set(pool, d);
    }
    if (d instanceof EmptyPoolError) throw d;
    return d;
  }

  private entry(category: string): Entry {
    let e = this.categories.get(category);
    if (!e) {
      e = { read: undefined, pending: undefined, cards: new PoolCardInterner() };
      this.categories.set(category, e);
    }
    return e;
  }

  private readInto(entry: Entry, api: PartnerApi, category: string, asking: Strategy): Promise<CategoryRead> {
    const pending = this.readCategory(api, category, entry.cards, asking).then((read) => {
      entry.read = read;
      return read;
    });
    entry.pending = pending;
    const clear = () => {
      if (entry.pending === pending) entry.pending = undefined;
    };
    pending.then(clear, clear);
    return pending;
  }

  private async readCategory(
    api: PartnerApi,
    category: string,
    cards: PoolCardInterner,
    asking: Strategy,
  ): Promise<CategoryRead> {
    const strategies = [asking, ...this.wanted.values()];
    const sentAt = this.now();
    try {
      const list = await api.listPacks({ category: category as never });
      const packs = new Map<string, Pack>();
      const pools = new Map<string, PackPool>();
      for (const pack of list.packs) {
        if (!pack.available) continue;
        packs.set(pack.pack_type, pack);
        for (const risk of pack.risk_levels) {
          if (!strategies.some((s) => opens(s, category, pack.pack_type, risk))) continue;
          const pool = await api.getPackPool({
            pack_type: pack.pack_type,
            category: category as never,
            risk_level: risk as never,
          });
          pools.set(`${pack.pack_type}/${risk}`, cards.pool(pool));
        }
      }
      return { category, packs, pools, sentAt, readAt: this.now() };
    } finally {
      cards.endRead();
    }
  }
}

/** Whether `strategy` may open this pack (its categories, included and excluded packs). */
export const opensPack = (strategy: Strategy, category: string, packType: string): boolean =>
  outOfScope(strategy, category, packType) === null;

/** Whether `strategy` may open this pool (the pack, and the risk level). */
export const opens = (strategy: Strategy, category: string, packType: string, risk: string): boolean =>
  outOfScope(strategy, category, packType, risk) === null;

/** Whether the read holds every pool of the category `strategy` may open. */
function covers(read: CategoryRead, strategy: Strategy): boolean {
  for (const pack of read.packs.values())
    for (const risk of pack.risk_levels)
      if (
        opens(strategy, read.category, pack.pack_type, risk) &&
        !read.pools.has(`${pack.pack_type}/${risk}`)
      )
        return false;
  return true;
}
