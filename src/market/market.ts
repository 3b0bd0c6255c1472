/**
 * The simulated Partner Trading API as an in-process state machine over an injected Clock and a
 * seeded PRNG. `market.api(key)` is a PartnerApi for one key; `market.handle()` is what the HTTP
 * server calls with raw (unvalidated) input. Both go through the same code, so in-process and HTTP
 * behave identically. Errors are the classes of src/api/errors.ts.
 */

import {
  CardNoLongerAvailableError,
  DailyCardLimitReachedError,
  DailyLimitReachedError,
  ForbiddenError,
  IdempotencyInProgressError,
  IdempotencyKeyReusedError,
  NotFoundError,
  OrderRefundedError,
  OwnListingError,
  PriceChangedError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
} from '../api/errors.js';
import { ENDPOINTS, OPERATIONS, type Operation } from '../api/operations.js';
import type { PartnerApi } from '../api/partner-api.js';
import {
  DEFAULT_CATEGORY,
  DEFAULT_RISK_LEVEL,
  PAGE_LIMITS,
  REPORT_DEFAULT_WINDOW_MS,
  REPORT_MAX_WINDOW_MS,
} from '../api/rules.js';
import type {
  CardPurchaseRequest,
  Category,
  CreateListingRequest,
  DeleteListingRequest,
  PackListQuery,
  PackPoolQuery,
  PurchaseReportQuery,
  SellBackRequest,
  ShopCardsQuery,
  VaultQuery,
} from '../api/schemas.js';
import { type Clock, DAY_MS, iso, nextUtcMidnight, utcDay } from '../core/clock.js';
import { applyRate, type Cents, toCents, toUsd } from '../core/money.js';
import { freshEnds, lockEnds, sellBackOffer } from '../strategy/market-laws.js';
import { type Acquisition, offerAt } from './buyback.js';
import { advanceDynamics } from './dynamics.js';
import { type FaultRule, Faults } from './faults.js';
import {
  bandWeight,
  type CardRec,
  cardValue,
  chaseActive,
  type Draw,
  drawable,
  drawPull,
  expectedValueCents,
  type PoolState,
  poolKey,
  shopPrice,
  totalWeight,
  undoDraw,
} from './inventory.js';
import {
  decodeState,
  encodeState,
  readStateHeader,
  STATE_FORMAT,
  STATE_VERSION,
  worldIdentity,
} from './persist.js';
import { recordOpening, reportRows } from './report-log.js';
import { type PackPurchaseInput, packPurchaseInput, parseRequest } from './request.js';
import { SimClock } from './sim-clock.js';
import {
  type AccountState,
  buildState,
  type KeyState,
  type LedgerEntry,
  type MarketState,
  record,
} from './state.js';
import * as v from './validate.js';
import type { World } from './world-schema.js';

export interface MarketOptions {
  clock: Clock;
  seed?: number;
}

/** A request as the HTTP server sees it (everything untrusted). */
export interface RawRequest {
  authorization?: string | undefined;
  idempotencyKey?: string | undefined;
  body?: unknown;
  query?: Record<string, unknown>;
}

type Json = Record<string, unknown>;

/** Operations that can change the state (an order, a sell-back, a listing). */
export const MUTATING_OPS: ReadonlySet<Operation> = new Set(
  (Object.keys(OPERATIONS) as Operation[]).filter((op) => OPERATIONS[op].mutates),
);

interface Caller {
  key: KeyState;
  account: AccountState | null;
}

export class Market {
  readonly clock: Clock;
  readonly seed: number;
  readonly faults: Faults;
  private s: MarketState;
  private readonly mutationListeners: ((op: Operation) => void)[] = [];

  constructor(
    readonly world: World,
    opts: MarketOptions,
  ) {
    this.clock = opts.clock;
    this.seed = opts.seed ?? 1;
    this.faults = new Faults(this.seed);
    this.s = buildState(world, this.seed, this.clock.now());
  }

  /** Back to the world's initial state (same seed); the clock keeps its time. */
  reset(): void {
    this.s = buildState(this.world, this.seed, this.clock.now());
    this.faults.clear();
  }

  /**
   * The whole state as bytes (format version, world identity, the clock's time; see persist.ts).
   * Orders still running are left out: they have not changed anything yet.
   */
  saveState(meta?: Record<string, unknown>): Buffer {
    const offset = this.clock instanceof SimClock ? this.clock.offsetMs : undefined;
    return encodeState(
      {
        format: STATE_FORMAT,
        version: STATE_VERSION,
        identity: worldIdentity(this.world, this.seed),
        world: this.world.name,
        seed: this.seed,
        savedAt: this.clock.now(),
        ...(offset !== undefined ? { clockOffsetMs: offset } : {}),
        ...(meta ? { meta } : {}),
      },
      this.s,
      this.faults,
    );
  }

  /**
   * Replaces the state with one `saveState` wrote for the same world and seed (StateMismatchError
   * otherwise). A SimClock is moved forward to the saved time if it is behind; other clocks are
   * the caller's to start no earlier than `readStateHeader(buf).savedAt`.
   */
  restoreState(buf: Buffer): void {
    const { header, state, faults } = decodeState(buf, this.world, this.seed);
    if (this.clock instanceof SimClock && this.clock.now() < header.savedAt)
      this.clock.advance(header.savedAt - this.clock.now());
    this.s = state;
    Object.assign(this.faults, faults);
  }

  /** A market restored from `saveState` bytes, with the seed they were written with. */
  static fromState(world: World, buf: Buffer, opts: Omit<MarketOptions, 'seed'>): Market {
    const market = new Market(world, { ...opts, seed: readStateHeader(buf).seed });
    market.restoreState(buf);
    return market;
  }

  /** Called after every request of a MUTATING_OPS operation (answered or refused), before it returns. */
  onMutation(listener: (op: Operation) => void): void {
    this.mutationListeners.push(listener);
  }

  setFaults(config: Record<string, FaultRule>): void {
    this.faults.set(config);
  }

  /**
   * A PartnerApi acting with `apiKey`, in process. Every answer is read with the operation's
   * response schema, as the HTTP client reads it: the simulator is held to the same contract.
   */
  api(apiKey: string): PartnerApi {
    const authorization = `Bearer ${apiKey}`;
    const call = async <T>(op: Operation, req: Omit<RawRequest, 'authorization'>): Promise<T> =>
      OPERATIONS[op].response.parse(await this.handle(op, { ...req, authorization })) as T;
    return {
      purchasePacks: (body, idempotencyKey) => call('purchasePacks', { body, idempotencyKey }),
      purchaseCard: (body, idempotencyKey) => call('purchaseCard', { body, idempotencyKey }),
      sellBack: (items) => call('sellBack', { body: { items } }),
      createListing: (body) => call('createListing', { body }),
      deleteListing: (body) => call('deleteListing', { body }),
      listPacks: (query) => call('listPacks', { query: { ...query } }),
      getPackPool: (query) => call('getPackPool', { query: { ...query } }),
      listShopCards: (query) => call('listShopCards', { query: { ...query } }),
      getVault: (query) => call('getVault', { query: { ...query } }),
      getAccount: () => call('getAccount', {}),
      getIdentity: () => call('getIdentity', {}),
      getPurchaseReport: (query) => call('getPurchaseReport', { query: { ...query } }),
    };
  }

  /** Runs one operation. Throws PartnerApiError subclasses for every error response. */
  async handle(op: Operation, req: RawRequest): Promise<Json> {
    const endpoint = ENDPOINTS[op];
    try {
      const caller = this.authorize(req.authorization, op);
      if (op === 'purchasePacks' || op === 'purchaseCard') return await this.order(op, caller, req);
      const latency = this.faults.latencyMs(endpoint);
      if (latency > 0) await this.clock.sleep(latency);
      this.sync();
      if (this.faults.roll(endpoint, 'error')) throw new ServerError('injected server fault');
      return this.run(op, caller, req);
    } catch (e) {
      if (e instanceof Error && 'endpoint' in e && e.endpoint === undefined)
        (e as { endpoint: string }).endpoint = endpoint;
      throw e;
    } finally {
      if (MUTATING_OPS.has(op)) for (const l of this.mutationListeners) l(op);
    }
  }

  private run(op: Operation, caller: Caller, req: RawRequest): Json {
    switch (op) {
      case 'sellBack':
        return this.sellBack(caller, parseRequest(op, req));
      case 'createListing':
        return this.createListing(caller, parseRequest(op, req));
      case 'deleteListing':
        return this.deleteListing(caller, parseRequest(op, req));
      case 'listPacks':
        return this.listPacks(parseRequest(op, req));
      case 'getPackPool':
        return this.getPackPool(parseRequest(op, req));
      case 'listShopCards':
        return this.listShopCards(parseRequest(op, req));
      case 'getVault':
        return this.getVault(caller, parseRequest(op, req));
      case 'getAccount':
        return this.getAccount(caller);
      case 'getIdentity':
        return this.getIdentity(caller);
      case 'getPurchaseReport':
        return this.getPurchaseReport(parseRequest(op, req));
      default:
        throw new Error(`not a read/write op: ${op}`);
    }
  }

  private now(): number {
    return this.clock.now();
  }

  private sync(): number {
    const now = this.now();
    advanceDynamics(this.s, now);
    return now;
  }

  /** Throws the 401/403 a request with this Authorization header gets for `op`. */
  authenticate(header: string | undefined, op: Operation): void {
    this.authorize(header, op);
  }

  private authorize(header: string | undefined, op: Operation): Caller {
    if (!header) throw new UnauthorizedError('missing Authorization header');
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!m) throw new UnauthorizedError('malformed Authorization header; expected "Bearer <API_KEY>"');
    const key = this.s.keys.get(m[1]!);
    if (!key) throw new UnauthorizedError('unknown API key');
    if (key.disabled) throw new UnauthorizedError('API key is disabled');
    const { scope, linked } = OPERATIONS[op];
    if (scope && !key.scopes.has(scope)) throw new ForbiddenError(`key lacks the scope '${scope}'`);
    const account = key.accountId ? (this.s.accounts.get(key.accountId) ?? null) : null;
    if (linked && !account) throw new ForbiddenError('this action needs a key linked to a user account');
    return { key, account };
  }

  // ---------- orders: the idempotency state machine ----------

  private async order(op: 'purchasePacks' | 'purchaseCard', caller: Caller, req: RawRequest): Promise<Json> {
    const endpoint = ENDPOINTS[op];
    const ik = v.idempotencyKey(req.idempotencyKey);
    // Normalised (defaults applied) so that a retry spelling a default out is the same order.
    const input =
      op === 'purchasePacks'
        ? packPurchaseInput(parseRequest('purchasePacks', req))
        : parseRequest('purchaseCard', req);
    const account = caller.account!;
    const id = `${account.id}\u0000${ik}`;
    const fingerprint = JSON.stringify([op, input]);
    const existing = this.s.orders.get(id);
    if (existing) {
      if (existing.fingerprint !== fingerprint)
        throw new IdempotencyKeyReusedError('this Idempotency-Key was used for a different order');
      if (existing.state === 'running')
        throw new IdempotencyInProgressError(
          'an order with this Idempotency-Key is still running; retry shortly',
        );
      return { ...structuredClone(existing.response as Json), idempotent_replay: true };
    }
    const state = this.s;
    const order = { state: 'running' as 'running' | 'finished', fingerprint, response: undefined as unknown };
    state.orders.set(id, order);
    try {
      const latency = this.faults.latencyMs(endpoint);
      if (latency > 0) await this.clock.sleep(latency);
      if (this.s !== state) throw new ServerError('the simulator was reset while the order ran');
      const now = this.sync();
      const response =
        op === 'purchasePacks'
          ? this.purchasePacks(caller, input as PackPurchaseInput, now)
          : this.purchaseCard(caller, input as CardPurchaseRequest, now);
      order.state = 'finished';
      order.response = response;
      return structuredClone(response);
    } catch (e) {
      // A failed order is refunded (nothing was kept) and releases its key: a retry runs again.
      state.orders.delete(id);
      throw e;
    }
  }

  private pool(category: Category, packType: string): PoolState | undefined {
    const p = this.s.inv.poolByKey.get(poolKey(category, packType));
    return p?.spec.purchasable ? p : undefined;
  }

  private packsToday(a: AccountState, now: number): number {
    return a.packDay === utcDay(now) ? a.packsToday : 0;
  }

  private purchasePacks(caller: Caller, req: PackPurchaseInput, now: number): Json {
    const s = this.s;
    const account = caller.account!;
    const key = caller.key;
    const pool = this.pool(req.category, req.pack_type);
    if (!pool) throw v.bad(`unknown pack_type '${req.pack_type}' in category '${req.category}'`);
    if (!pool.spec.available || !drawable(pool, now))
      throw v.bad(`pack '${req.pack_type}' is not available: ${pool.spec.reason ?? 'out of stock'}`);
    if (req.quantity > pool.spec.max_quantity)
      throw v.bad(
        pool.spec.max_quantity === 1
          ? `pack '${req.pack_type}' cannot be bought in multiples (max_quantity 1)`
          : `quantity ${req.quantity} is above this pack's max_quantity ${pool.spec.max_quantity}`,
      );
    if (!pool.spec.risk_levels.includes(req.risk_level))
      throw v.bad(
        `risk_level '${req.risk_level}' is not offered by this pack (${pool.spec.risk_levels.join(', ')})`,
      );
    const used = this.packsToday(account, now);
    if (used + req.quantity > key.maxPacksPerDay)
      throw new DailyLimitReachedError(key.maxPacksPerDay, used, iso(nextUtcMidnight(now)));
    const nextAt = key.lastPurchaseAt === null ? now : key.lastPurchaseAt + key.minSecondsBetween * 1000;
    if (now < nextAt) throw new RateLimitedError(Math.max(1, Math.ceil((nextAt - now) / 1000)));
    const cost = pool.priceCents * req.quantity;
    if (account.balanceCents < cost)
      throw v.bad(
        `insufficient balance: the order costs $${toUsd(cost).toFixed(2)}, balance is $${toUsd(account.balanceCents).toFixed(2)}`,
      );

    const checkoutId = s.ids.uuid();
    record(s, account.id, now, 'pack_purchase', -cost, checkoutId);
    const prevLast = key.lastPurchaseAt;
    key.lastPurchaseAt = now;
    const prevDay = account.packDay;
    const prevCount = account.packsToday;
    account.packDay = utcDay(now);
    account.packsToday = used + req.quantity;

    const failAt = this.faults.roll(ENDPOINTS.purchasePacks, 'error') ? s.draws.int(req.quantity) : -1;
    const draws: Draw[] = [];
    let failed = false;
    for (let i = 0; i < req.quantity; i++) {
      const d = i === failAt ? undefined : drawPull(s.inv, pool, req.risk_level, now, s.draws);
      if (!d) {
        failed = true;
        break;
      }
      draws.push(d);
    }
    if (failed) {
      // All or nothing: put every pulled card back, refund, and give the limit slots back.
      for (const d of draws.reverse()) undoDraw(s.inv, pool, d);
      record(s, account.id, now, 'pack_refund', cost, checkoutId);
      key.lastPurchaseAt = prevLast;
      account.packDay = prevDay;
      account.packsToday = prevCount;
      throw new OrderRefundedError('a pack failed to open; the whole order was refunded');
    }

    const rules = s.world.rules;
    const pulls: Json[] = [];
    let totalValue = 0;
    let buybackNow = 0;
    let best: { pull_id: string; name: string; value: number } | null = null;
    let bestCents = -1;
    for (const d of draws) {
      const c = s.inv.cards[d.slot]!;
      const value = cardValue(s.inv, c);
      const pullId = s.ids.uuid();
      const acq: Acquisition = {
        id: pullId,
        kind: 'pull',
        slot: c.slot,
        accountId: account.id,
        at: now,
        valueCents: value,
        basisCents: value,
        sale: null,
      };
      s.acquisitions.set(pullId, acq);
      c.owner = account.id;
      c.acquisition = pullId;
      c.loc = c.kind === 'sealed' ? 'sealed' : 'vault';
      const band = d.band >= 0 ? pool.bands[d.band]! : undefined;
      const hit = {
        rarity_tier: band ? band.rarityTier : 'chase',
        bucket: band ? band.spec.bucket_id : 'chase',
        bucket_odds: d.odds,
        is_chase: !band,
        chase_label: band ? null : pool.chase!.label,
      };
      totalValue += value;
      let buyback: Json | null = null;
      if (c.kind === 'card') {
        // The offer now (fresh window) and right after it (locked), by the law of sell-back.
        const freshUntil = freshEnds(now, rules);
        const fresh = sellBackOffer('pull', now, value, value, now, rules);
        const after = sellBackOffer('pull', now, value, value, freshUntil + 1, rules);
        buybackNow += fresh.amountCents;
        buyback = {
          amount: toUsd(fresh.amountCents),
          rate: fresh.rate,
          valid_until: iso(freshUntil),
          after: {
            amount: toUsd(after.amountCents),
            rate: after.rate,
            valid_until: iso(lockEnds(now, rules)),
          },
        };
      }
      if (value > bestCents) {
        bestCents = value;
        best = { pull_id: pullId, name: c.name, value: toUsd(value) };
      }
      pulls.push({
        pull_id: pullId,
        kind: c.kind === 'sealed' ? 'sealed_pack' : 'card',
        item: c.kind === 'sealed' ? this.sealedWire(c) : this.cardWire(c),
        value: toUsd(value),
        hit,
        buyback,
      });
      recordOpening(s.report, {
        at: now,
        userId: account.userId,
        amountCents: pool.priceCents,
        pool: pool.index,
        internal: account.internal,
      });
    }
    return {
      checkout_id: checkoutId,
      pack_type: pool.spec.pack_type,
      category: pool.category,
      risk_level: req.risk_level,
      quantity: req.quantity,
      total_charged: toUsd(cost),
      remaining_balance: toUsd(account.balanceCents),
      summary: { total_value: toUsd(totalValue), buyback_now_total: toUsd(buybackNow), best_pull: best },
      pulls,
    };
  }

  private purchaseCard(caller: Caller, req: { card_id: string; max_price: number }, now: number): Json {
    const s = this.s;
    const rules = s.world.rules;
    const account = caller.account!;
    const c = s.inv.byId.get(req.card_id);
    if (!c && s.inv.goneIds.has(req.card_id))
      throw new CardNoLongerAvailableError(
        'this card is no longer available (sold, pulled from a pack, or delisted)',
      );
    if (c?.kind !== 'card') throw new NotFoundError(`no card '${req.card_id}'`);
    const fromShop = c.loc === 'shop';
    if (!fromShop && c.loc !== 'listed' && c.loc !== 'listed_other')
      throw new CardNoLongerAvailableError(
        'this card is no longer available (sold, pulled from a pack, or delisted)',
      );
    if (c.listing && c.listing.seller === account.id)
      throw new OwnListingError('this card is your own listing');
    const price = fromShop ? shopPrice(s.inv, c) : c.listing!.priceCents;
    const maxPrice = toCents(req.max_price);
    if (price > maxPrice) throw new PriceChangedError(c.id, toUsd(price), req.max_price);
    if (rules.card_purchase_speed_limited) {
      const last = caller.key.lastCardPurchaseAt;
      const nextAt = last === null ? now : last + caller.key.minSecondsBetween * 1000;
      if (now < nextAt) throw new RateLimitedError(Math.max(1, Math.ceil((nextAt - now) / 1000)));
    }
    const day = utcDay(now);
    const count = account.cardDay === day ? account.cardsToday : 0;
    const spend = account.cardDay === day ? account.cardSpendTodayCents : 0;
    if (count + 1 > rules.card_daily_count_cap)
      throw new DailyCardLimitReachedError(
        `daily card purchase count cap reached (${rules.card_daily_count_cap})`,
      );
    if (spend + price > toCents(rules.card_daily_spend_cap))
      throw new DailyCardLimitReachedError(
        `daily card spend cap of $${rules.card_daily_spend_cap} would be exceeded`,
      );
    const fee = toCents(rules.card_fee);
    if (account.balanceCents < price + fee)
      throw v.bad(
        `insufficient balance: the card costs $${toUsd(price + fee).toFixed(2)} with the fee, balance is $${toUsd(account.balanceCents).toFixed(2)}`,
      );
    if (this.faults.roll(ENDPOINTS.purchaseCard, 'error')) throw new ServerError('injected server fault');

    const checkoutId = s.ids.uuid();
    const txn = s.ids.uuid();
    const valueNow = cardValue(s.inv, c);
    const listing = c.listing;
    record(s, account.id, now, 'card_purchase', -price, txn);
    if (fee > 0) record(s, account.id, now, 'card_fee', -fee, txn);
    if (listing) {
      s.inv.listings.delete(c.slot);
      if (listing.seller !== null) {
        record(s, listing.seller, now, 'listing_sale', price, listing.id);
        const sellerFee = applyRate(price, rules.seller_fee_rate);
        if (sellerFee > 0) record(s, listing.seller, now, 'seller_fee', -sellerFee, listing.id);
      }
      c.listing = null;
    } else s.inv.shop[c.category].delete(c.slot);
    caller.key.lastCardPurchaseAt = now;
    account.cardDay = day;
    account.cardsToday = count + 1;
    account.cardSpendTodayCents = spend + price;
    c.anchorCents = valueNow;
    c.anchorIndex = s.inv.index[c.category];
    c.loc = 'vault';
    c.owner = account.id;
    c.acquisition = txn;
    s.acquisitions.set(txn, {
      id: txn,
      kind: 'purchase',
      slot: c.slot,
      accountId: account.id,
      at: now,
      valueCents: valueNow,
      basisCents: Math.min(price, valueNow),
      sale: null,
    });
    const out: Json = {
      checkout_id: checkoutId,
      transaction_id: txn,
      card_id: c.id,
      source: listing ? 'listing' : 'shop',
      listing_id: listing ? listing.id : null,
      price: toUsd(price),
      fee: toUsd(fee),
      total_charged: toUsd(price + fee),
      remaining_balance: toUsd(account.balanceCents),
      item: this.cardWire(c),
    };
    if (this.faults.roll(ENDPOINTS.purchaseCard, 'needs_review')) out.needs_review = true;
    return out;
  }

  // ---------- sell-back and listings ----------

  private sellBack(caller: Caller, input: SellBackRequest): Json {
    const s = this.s;
    const items = input.items;
    const account = caller.account!;
    const now = this.now();
    let total = 0;
    const results = items.map((it) => {
      const failed = (error: string) => ({
        card_id: it.card_id,
        pull_id: it.pull_id,
        status: 'failed',
        error,
      });
      const c = s.inv.byId.get(it.card_id);
      if (!c) return failed('unknown card');
      const acq = s.acquisitions.get(it.pull_id);
      if (!acq) return failed('unknown pull_id');
      if (acq.slot !== c.slot) return failed('pull_id does not belong to this card');
      if (acq.accountId !== account.id) return failed('not the holder of this card');
      if (acq.sale)
        return {
          card_id: it.card_id,
          pull_id: it.pull_id,
          status: 'already_sold',
          transaction_id: acq.sale.transactionId,
          payout_amount: toUsd(acq.sale.payoutCents),
          payout_rate: acq.sale.rate,
        };
      if (c.kind === 'sealed') return failed('sealed packs cannot be sold back');
      if (c.owner !== account.id || c.acquisition !== acq.id) return failed('not the holder of this card');
      if (c.loc === 'listed') return failed('card is listed on the marketplace; delist it first');
      if (c.loc === 'shipped') return failed('card has been shipped');
      if (c.loc !== 'vault') return failed('card is not in the vault');
      const offer = offerAt(acq, cardValue(s.inv, c), now, s.world.rules);
      const txn = s.ids.uuid();
      record(s, account.id, now, 'sell_back', offer.amountCents, txn);
      acq.sale = { transactionId: txn, payoutCents: offer.amountCents, rate: offer.rate, at: now };
      c.loc = 'sold_back';
      c.owner = null;
      total += offer.amountCents;
      return {
        card_id: it.card_id,
        pull_id: it.pull_id,
        status: 'sold',
        transaction_id: txn,
        payout_amount: toUsd(offer.amountCents),
        payout_rate: offer.rate,
      };
    });
    return { total_paid: toUsd(total), remaining_balance: toUsd(account.balanceCents), results };
  }

  private heldCard(account: AccountState, cardId: string): CardRec {
    const c = this.s.inv.byId.get(cardId);
    if (!c || c.owner !== account.id || (c.loc !== 'vault' && c.loc !== 'listed'))
      throw new NotFoundError(`card '${cardId}' is not in your vault`);
    return c;
  }

  private createListing(caller: Caller, input: CreateListingRequest): Json {
    const s = this.s;
    const cardId = input.card_id;
    const priceUsd = input.price;
    const c = this.heldCard(caller.account!, cardId);
    if (c.loc === 'listed') throw v.bad('card is already listed; delist it first to change the price');
    const price = toCents(priceUsd);
    const min = toCents(s.world.rules.marketplace_min_price);
    const max = Math.floor(cardValue(s.inv, c) * s.world.rules.max_listing_multiple);
    if (price <= min) throw v.bad(`price must be above the marketplace minimum of $${toUsd(min).toFixed(2)}`);
    if (price > max)
      throw v.bad(
        `price must be at most ${s.world.rules.max_listing_multiple} times the market value ($${toUsd(max).toFixed(2)})`,
      );
    const listingId = s.ids.uuid();
    c.loc = 'listed';
    c.listing = {
      id: listingId,
      priceCents: price,
      title: c.name,
      seller: caller.account!.id,
      createdAt: this.now(),
    };
    s.inv.listings.add(c.slot);
    return { listing_id: listingId, card_id: c.id, price: toUsd(price), title: c.name };
  }

  private deleteListing(caller: Caller, input: DeleteListingRequest): Json {
    const cardId = input.card_id;
    const c = this.heldCard(caller.account!, cardId);
    if (c.loc !== 'listed') throw v.bad('card is not listed');
    this.s.inv.listings.delete(c.slot);
    c.listing = null;
    c.loc = 'vault';
    return { card_id: c.id, delisted: true };
  }

  // ---------- reads ----------

  private listPacks(q: PackListQuery): Json {
    const category = q.category ?? DEFAULT_CATEGORY;
    const now = this.now();
    const packs = this.s.inv.pools
      .filter((p) => p.category === category && p.spec.purchasable)
      .map((p) => {
        const available = p.spec.available && drawable(p, now);
        return {
          pack_type: p.spec.pack_type,
          name: p.spec.name,
          price: toUsd(p.priceCents),
          available,
          ...(available ? {} : { reason: p.spec.reason ?? 'out of stock' }),
          max_quantity: p.spec.max_quantity,
          risk_levels: [...p.spec.risk_levels],
        };
      });
    return { category, packs };
  }

  private getPackPool(q: PackPoolQuery): Json {
    const s = this.s;
    const packType = q.pack_type;
    const category = q.category ?? DEFAULT_CATEGORY;
    const risk = q.risk_level ?? DEFAULT_RISK_LEVEL;
    const pool = this.pool(category, packType);
    if (!pool) throw new NotFoundError(`no pack '${packType}' that can be bought in category '${category}'`);
    if (!pool.spec.risk_levels.includes(risk))
      throw v.bad(`risk_level '${risk}' is not offered by this pack (${pool.spec.risk_levels.join(', ')})`);
    const now = this.now();
    const t = totalWeight(pool, risk);
    const cards: { c: CardRec; v: Cents; bucket: string }[] = [];
    const bands = pool.bands.map((b) => {
      const w = bandWeight(b, risk);
      if (w > 0)
        for (let i = 0; i < b.bag.count; i++) {
          const c = s.inv.cards[b.bag.at(i)]!;
          cards.push({ c, v: cardValue(s.inv, c), bucket: b.spec.bucket_id });
        }
      return {
        bucket_id: b.spec.bucket_id,
        label: b.label,
        min_value: toUsd(b.minCents),
        max_value: toUsd(b.maxCents),
        odds: w > 0 ? w / t : 0,
        is_consolation: b.spec.is_consolation,
        hittable_cards: w > 0 ? b.bag.count : 0,
      };
    });
    cards.sort((a, b) => b.v - a.v || (a.c.id < b.c.id ? -1 : a.c.id > b.c.id ? 1 : 0));
    const ch = pool.chase;
    const chase =
      ch && chaseActive(pool, now)
        ? {
            card: this.cardWire(s.inv.cards[ch.slot]!),
            probability: ch.probability,
            odds_label: ch.oddsLabel,
            label: ch.label,
            ends_at: ch.endsAt === null ? null : iso(ch.endsAt),
          }
        : null;
    return {
      pack_type: pool.spec.pack_type,
      name: pool.spec.name,
      category,
      risk_level: risk,
      price: toUsd(pool.priceCents),
      available: pool.spec.available && drawable(pool, now),
      expected_value: toUsd(Math.round(expectedValueCents(s.inv, pool, risk, now))),
      bands,
      chase,
      total_cards: cards.length,
      cards: cards.map((x) => ({
        ...(x.c.kind === 'sealed' ? this.sealedAsCard(x.c) : this.cardWire(x.c)),
        bucket_id: x.bucket,
      })),
    };
  }

  private listShopCards(q: ShopCardsQuery): Json {
    const s = this.s;
    const category = q.category ?? DEFAULT_CATEGORY;
    const page = q.page ?? 1;
    const perPage = q.per_page ?? PAGE_LIMITS.shopCards.default;
    const all = [...s.inv.shop[category]].map((slot) => s.inv.cards[slot]!);
    all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const slice = all.slice((page - 1) * perPage, page * perPage);
    return {
      category,
      page,
      per_page: perPage,
      total: all.length,
      cards: slice.map((c) => ({
        ...this.cardWire(c),
        price: toUsd(shopPrice(s.inv, c)),
        sale_status: 'shop',
      })),
    };
  }

  private getVault(caller: Caller, q: VaultQuery): Json {
    const s = this.s;
    const category = q.category ?? DEFAULT_CATEGORY;
    const page = q.page ?? 1;
    const perPage = q.per_page ?? PAGE_LIMITS.vault.default;
    const account = caller.account!;
    const now = this.now();
    const held: { c: CardRec; acq: Acquisition }[] = [];
    for (const acq of s.acquisitions.values()) {
      const c = s.inv.cards[acq.slot]!;
      if (c.acquisition !== acq.id || c.owner !== account.id || c.category !== category) continue;
      if (c.loc === 'vault' || c.loc === 'listed') held.push({ c, acq });
    }
    const slice = held.slice((page - 1) * perPage, page * perPage);
    return {
      category,
      page,
      per_page: perPage,
      total: held.length,
      cards: slice.map(({ c, acq }) => {
        const value = cardValue(s.inv, c);
        const offer = offerAt(acq, value, now, s.world.rules);
        return {
          card_id: c.id,
          pull_id: acq.id,
          pulled_at: acq.kind === 'pull' ? iso(acq.at) : null,
          acquired_at: iso(acq.at),
          item: this.cardWire(c),
          value: toUsd(value),
          listed: c.loc === 'listed',
          buyback:
            c.loc === 'listed'
              ? null
              : {
                  amount: toUsd(offer.amountCents),
                  rate: offer.rate,
                  basis_value: toUsd(offer.basisCents),
                  locked_value_until: offer.lockedUntil === null ? null : iso(offer.lockedUntil),
                },
        };
      }),
    };
  }

  private getAccount(caller: Caller): Json {
    const a = caller.account!;
    const k = caller.key;
    const now = this.now();
    const used = this.packsToday(a, now);
    const nextAt =
      k.lastPurchaseAt === null ? now : Math.max(now, k.lastPurchaseAt + k.minSecondsBetween * 1000);
    return {
      username: a.username,
      balance: toUsd(a.balanceCents),
      limits: {
        packs_today: used,
        max_packs_per_day: k.maxPacksPerDay,
        packs_left_today: Math.max(0, k.maxPacksPerDay - used),
        resets_at: iso(nextUtcMidnight(now)),
        min_seconds_between_purchases: k.minSecondsBetween,
        next_purchase_at: iso(nextAt),
      },
    };
  }

  private getIdentity(caller: Caller): Json {
    const a = caller.account;
    return {
      key: { name: caller.key.name, scopes: [...caller.key.scopes] },
      linked: a !== null,
      account: a
        ? {
            id: a.id,
            username: a.username,
            profile_url: `https://sim.packbot.invalid/u/${encodeURIComponent(a.username)}`,
          }
        : null,
    };
  }

  private getPurchaseReport(q: PurchaseReportQuery): Json {
    const now = this.now();
    const untilQ = v.timestamp(q.until, 'until');
    const sinceQ = v.timestamp(q.since, 'since');
    const until = untilQ ?? now;
    const since = sinceQ ?? until - REPORT_DEFAULT_WINDOW_MS;
    if (since > until) throw v.bad('inverted window: since is after until');
    if (until - since > REPORT_MAX_WINDOW_MS) throw v.bad('window is longer than 31 days');
    const page = q.page ?? 1;
    const perPage = q.per_page ?? PAGE_LIMITS.purchaseReport.default;
    const rows = reportRows(this.s.report, since, until);
    const pools = this.s.inv.pools;
    return {
      since: iso(since),
      until: iso(until),
      page,
      per_page: perPage,
      total: rows.length,
      pulls: rows.slice((page - 1) * perPage, page * perPage).map((r) => ({
        user_id: r.userId,
        created_at: iso(r.at),
        amount: toUsd(r.amountCents),
        source: pools[r.pool]!.spec.report_source ?? pools[r.pool]!.category,
        pack_type: pools[r.pool]!.spec.pack_type,
      })),
    };
  }

  // ---------- wire shapes ----------

  private cardWire(c: CardRec): Json {
    const img = c.imageUrl;
    return {
      id: c.id,
      category: c.category,
      name: c.name,
      set: c.set,
      grading_company: c.gradingCompany,
      grading_rank: c.gradingRank,
      cert_number: c.certNumber,
      market_value: toUsd(cardValue(this.s.inv, c)),
      front_image: `${img}/front.png`,
      back_image: `${img}/back.png`,
      render_image: `${img}/render.png`,
      image_url: `${img}/front.png`,
      slab_label: `${c.gradingCompany} ${c.gradingRank} ${c.name}`,
    };
  }

  private sealedWire(c: CardRec): Json {
    return { id: c.id, name: c.name, set: c.set, category: c.category, image_url: `${c.imageUrl}/front.png` };
  }

  private sealedAsCard(c: CardRec): Json {
    return { ...this.sealedWire(c), market_value: toUsd(cardValue(this.s.inv, c)), kind: 'sealed_pack' };
  }

  // ---------- admin and test accessors ----------

  /** Admin: a held card leaves the vault for good (shipping is not part of the partner API). */
  ship(cardId: string): { card_id: string; shipped: true } {
    const c = this.s.inv.byId.get(cardId);
    if (c?.loc !== 'vault') throw new NotFoundError(`card '${cardId}' is not in a vault (unlisted)`);
    c.loc = 'shipped';
    return { card_id: c.id, shipped: true };
  }

  /** Every money movement, in order. Balance = starting balance + sum of the account's entries. */
  ledger(): readonly LedgerEntry[] {
    return this.s.ledger;
  }

  /**
   * Finished orders by idempotency key (admin API, for audits): the checkout each key produced and
   * its pulls, including orders whose answer never reached the client.
   */
  finishedOrders(): {
    account: string;
    key: string;
    checkout_id: string;
    pull_ids: string[];
    /** Card orders: the sale (ref of its ledger entries) and the card. */
    transaction_id?: string;
    card_id?: string;
  }[] {
    const out = [];
    for (const [id, o] of this.s.orders) {
      if (o.state !== 'finished') continue;
      const [account, key] = id.split('\u0000') as [string, string];
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
          ? { transaction_id: r.transaction_id, card_id: String(r.card_id) }
          : {}),
      });
    }
    return out;
  }

  balanceCents(accountId: string): Cents {
    const a = this.s.accounts.get(accountId);
    if (!a) throw new Error(`no account '${accountId}'`);
    return a.balanceCents;
  }

  /** Other users' marketplace listings (not visible in the partner API, which only lists the shop). */
  otherListings(
    category?: Category,
  ): { listing_id: string; card_id: string; price: number; title: string }[] {
    const out = [];
    for (const slot of this.s.inv.listings) {
      const c = this.s.inv.cards[slot]!;
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

  /** Applies background dynamics up to the clock's now (also done by every call). */
  syncNow(): void {
    this.sync();
  }

  /** Checks the model's invariants; returns the violations (empty when all hold). */
  audit(): string[] {
    const s = this.s;
    const problems: string[] = [];
    const seen = new Map<number, string>();
    const claim = (slot: number, where: string) => {
      const prev = seen.get(slot);
      if (prev) problems.push(`card ${s.inv.cards[slot]!.id} is in ${prev} and ${where}`);
      seen.set(slot, where);
    };
    const released = this.auditReleased();
    if (released.length > 0) return released;
    for (const pool of s.inv.pools) {
      for (const b of pool.bands) {
        let sum = 0;
        for (let i = 0; i < b.bag.count; i++) {
          const c = s.inv.cards[b.bag.at(i)]!;
          claim(c.slot, `pool ${pool.spec.pack_type}/${b.spec.bucket_id}`);
          if (c.loc !== 'pool' || c.pool !== pool.index || c.band !== b.index)
            problems.push(`card ${c.id} in a band but marked ${c.loc}`);
          sum += c.anchorCents;
        }
        if (sum !== b.sumCents) problems.push(`band ${b.spec.bucket_id} value sum drifted`);
      }
      if (pool.chase && !pool.chase.hit) claim(pool.chase.slot, `chase of ${pool.spec.pack_type}`);
    }
    for (const c of Object.keys(s.inv.shop) as Category[])
      for (const slot of s.inv.shop[c]) {
        claim(slot, 'shop');
        if (s.inv.cards[slot]!.loc !== 'shop')
          problems.push(`shop card ${s.inv.cards[slot]!.id} marked elsewhere`);
      }
    for (const slot of s.inv.listings) {
      claim(slot, 'listings');
      const c = s.inv.cards[slot]!;
      if (c.loc !== 'listed' && c.loc !== 'listed_other')
        problems.push(`listed card ${c.id} marked ${c.loc}`);
    }
    for (const c of s.inv.cards) {
      if (!c) continue;
      if ((c.loc === 'vault' || c.loc === 'sealed' || c.loc === 'shipped') && !c.owner)
        problems.push(`held card ${c.id} has no owner`);
      if (c.loc === 'vault' || c.loc === 'sealed') claim(c.slot, `vault of ${c.owner}`);
      if (
        !seen.has(c.slot) &&
        (c.loc === 'pool' || c.loc === 'shop' || c.loc === 'listed' || c.loc === 'listed_other')
      )
        problems.push(`card ${c.id} marked ${c.loc} but in no index`);
    }
    for (const a of s.accounts.values()) {
      let sum = a.initialCents;
      for (const e of s.ledger) if (e.accountId === a.id) sum += e.amountCents;
      if (sum !== a.balanceCents)
        problems.push(`account ${a.id}: balance ${a.balanceCents} != ledger ${sum}`);
      if (a.balanceCents < 0) problems.push(`account ${a.id} is negative`);
    }
    return problems;
  }

  /** Released slots are empty and referenced by nothing; the id index holds exactly the live cards. */
  private auditReleased(): string[] {
    const inv = this.s.inv;
    const problems: string[] = [];
    const empty = (slot: number, where: string) => {
      if (inv.cards[slot] === undefined) problems.push(`${where} refers to released slot ${slot}`);
    };
    for (const slot of inv.free)
      if (inv.cards[slot] !== undefined) problems.push(`released slot ${slot} holds a card`);
    for (const pool of inv.pools) {
      for (const b of pool.bands)
        for (let i = 0; i < b.bag.count; i++) empty(b.bag.at(i), `band ${b.spec.bucket_id}`);
      if (pool.chase) empty(pool.chase.slot, `chase of ${pool.spec.pack_type}`);
    }
    for (const c of Object.keys(inv.shop) as Category[]) for (const slot of inv.shop[c]) empty(slot, 'shop');
    for (const slot of inv.listings) empty(slot, 'listings');
    for (const a of this.s.acquisitions.values()) empty(a.slot, `acquisition ${a.id}`);
    let live = 0;
    for (const c of inv.cards) {
      if (!c) continue;
      live++;
      if (inv.byId.get(c.id) !== c) problems.push(`card ${c.id} is not indexed by its id`);
      if (inv.goneIds.has(c.id)) problems.push(`card ${c.id} is live and released`);
    }
    if (live !== inv.byId.size) problems.push(`${inv.byId.size - live} ids index no live card`);
    return problems;
  }

  /** A JSON-able summary of the whole state for `GET /sim/v1/state`. */
  dump(): Json {
    const s = this.s;
    const now = this.sync();
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
        packs_today: this.packsToday(a, now),
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
      orders: [...s.orders.entries()].map(([k, o]) => ({ account: k.split('\u0000')[0], state: o.state })),
      report_rows: s.report.n,
      pack_openings: s.report.openings,
      ledger_entries: s.ledger.length,
      faults: this.faults.list(),
      audit: this.audit(),
    };
  }
}
