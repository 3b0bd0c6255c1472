/**
 * The simulated Partner Trading API as an in-process state machine over an injected Clock and a
 * seeded PRNG. `market.api(key)` is a PartnerApi for one key; `market.handle()` is what the HTTP
 * server calls with raw (unvalidated) input. Both go through the same code, so in-process and HTTP
 * behave identically. Errors are the classes of src/api/errors.ts.
 *
 * This class owns the state and wires the handlers over it: auth.ts (who is calling),
 * idempotency.ts (the order state machine), orders.ts (pack and card purchases), sell-and-list.ts
 * (sell-back and listings), reads.ts, limits.ts (rate limit and daily counters), admin.ts and
 * audit.ts; wire shapes are in wire.ts, saving and restoring the state in persist.ts.
 */

import { ServerError } from '../api/errors.js';
import { ENDPOINTS, OPERATIONS, type Operation } from '../api/operations.js';
import type { PartnerApi } from '../api/partner-api.js';
import type { Category } from '../api/schemas.js';
import type { Clock } from '../core/clock.js';
import type { Cents } from '../core/money.js';
import * as admin from './admin.js';
import { shapeAnswer } from './answer-shape.js';
import { audit } from './audit.js';
import { authorize, type Caller } from './auth.js';
import { type MarketContext, sync } from './context.js';
import { type FaultRule, Faults } from './faults.js';
import { runOrder } from './idempotency.js';
import * as orders from './orders.js';
import {
  decodeState,
  encodeState,
  readStateHeader,
  STATE_FORMAT,
  STATE_VERSION,
  worldIdentity,
} from './persist.js';
import * as reads from './reads.js';
import { packPurchaseInput, parseRequest } from './request.js';
import * as holdings from './sell-and-list.js';
import { SimClock } from './sim-clock.js';
import { buildState, type LedgerEntry, type MarketState } from './state.js';
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
const MUTATING_OPS: ReadonlySet<Operation> = new Set(
  (Object.keys(OPERATIONS) as Operation[]).filter((op) => OPERATIONS[op].mutates),
);

export class Market {
  readonly clock: Clock;
  readonly seed: number;
  readonly faults: Faults;
  /** What the handlers run over; `s` is replaced by reset and restore. */
  private readonly ctx: { s: MarketState; readonly clock: Clock; readonly faults: Faults };
  private readonly mutationListeners: ((op: Operation) => void)[] = [];

  constructor(
    readonly world: World,
    opts: MarketOptions,
  ) {
    this.clock = opts.clock;
    this.seed = opts.seed ?? 1;
    this.faults = new Faults(this.seed);
    this.ctx = { s: buildState(world, this.seed, this.clock.now()), clock: this.clock, faults: this.faults };
  }

  /** Back to the world's initial state (same seed); the clock keeps its time. */
  reset(): void {
    this.ctx.s = buildState(this.world, this.seed, this.clock.now());
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
      this.ctx.s,
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
    this.ctx.s = state;
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

  /**
   * Runs one operation. Throws PartnerApiError subclasses for every error response. The answer is
   * written as the world's service writes it (extra fields, key order: answer-shape.ts).
   */
  async handle(op: Operation, req: RawRequest): Promise<Json> {
    const endpoint = ENDPOINTS[op];
    try {
      const caller = authorize(this.ctx.s, req.authorization, op);
      const answer =
        op === 'purchasePacks' || op === 'purchaseCard'
          ? await this.order(op, caller, req)
          : await this.nonOrder(op, caller, req);
      return this.shape(answer) as Json;
    } catch (e) {
      if (e instanceof Error && 'endpoint' in e && e.endpoint === undefined)
        (e as { endpoint: string }).endpoint = endpoint;
      throw e;
    } finally {
      if (MUTATING_OPS.has(op)) for (const l of this.mutationListeners) l(op);
    }
  }

  /** Any other operation, after the endpoint's injected latency and faults. */
  private async nonOrder(op: Operation, caller: Caller, req: RawRequest): Promise<Json> {
    const endpoint = ENDPOINTS[op];
    const latency = this.faults.latencyMs(endpoint);
    if (latency > 0) await this.clock.sleep(latency);
    sync(this.ctx);
    if (this.faults.roll(endpoint, 'error')) throw new ServerError('injected server fault');
    return this.run(op, caller, req);
  }

  /** A JSON body (an answer, or an error's) as this world's service writes it. */
  shape(body: unknown): unknown {
    return shapeAnswer(body, this.world.rules, this.seed, this.clock.now());
  }

  /** An order: its Idempotency-Key and input read first, then run at most once per key. */
  private async order(op: 'purchasePacks' | 'purchaseCard', caller: Caller, req: RawRequest): Promise<Json> {
    const ctx: MarketContext = this.ctx;
    const key = v.idempotencyKey(req.idempotencyKey);
    const account = caller.account!.id;
    if (op === 'purchasePacks') {
      // Normalised (defaults applied) so that a retry spelling a default out is the same order.
      const input = packPurchaseInput(parseRequest('purchasePacks', req));
      return runOrder(ctx, op, account, key, input, (now) => orders.purchasePacks(ctx, caller, input, now));
    }
    const input = parseRequest('purchaseCard', req);
    return runOrder(ctx, op, account, key, input, (now) => orders.purchaseCard(ctx, caller, input, now));
  }

  private run(op: Operation, caller: Caller, req: RawRequest): Json {
    const ctx: MarketContext = this.ctx;
    switch (op) {
      case 'sellBack':
        return holdings.sellBack(ctx, caller, holdings.holdingsInput(ctx, op, req));
      case 'createListing':
        return holdings.createListing(ctx, caller, holdings.holdingsInput(ctx, op, req));
      case 'deleteListing':
        return holdings.deleteListing(ctx, caller, holdings.holdingsInput(ctx, op, req));
      case 'listPacks':
        return reads.listPacks(ctx, parseRequest(op, req));
      case 'getPackPool':
        return reads.getPackPool(ctx, parseRequest(op, req));
      case 'listShopCards':
        return reads.listShopCards(ctx, parseRequest(op, req));
      case 'getVault':
        return reads.getVault(ctx, caller, parseRequest(op, req));
      case 'getAccount':
        return reads.getAccount(ctx, caller);
      case 'getIdentity':
        return reads.getIdentity(caller);
      case 'getPurchaseReport':
        return reads.getPurchaseReport(ctx, parseRequest(op, req));
      default:
        throw new Error(`not a read/write op: ${op}`);
    }
  }

  /** Throws the 401/403 a request with this Authorization header gets for `op`. */
  authenticate(header: string | undefined, op: Operation): void {
    authorize(this.ctx.s, header, op);
  }

  // ---------- admin and test accessors (admin.ts, audit.ts) ----------

  /** Admin: a held card leaves the vault for good (shipping is not part of the partner API). */
  ship(cardId: string): { card_id: string; shipped: true } {
    return admin.ship(this.ctx.s, cardId);
  }

  /** Every money movement, in order. Balance = starting balance + sum of the account's entries. */
  ledger(): readonly LedgerEntry[] {
    return this.ctx.s.ledger;
  }

  /**
   * Finished orders by idempotency key (admin API, for audits): the checkout each key produced and
   * its pulls, including orders whose answer never reached the client.
   */
  finishedOrders(): admin.FinishedOrder[] {
    return admin.finishedOrders(this.ctx.s);
  }

  balanceCents(accountId: string): Cents {
    return admin.balanceCents(this.ctx.s, accountId);
  }

  /** Other users' marketplace listings (not visible in the partner API, which only lists the shop). */
  otherListings(
    category?: Category,
  ): { listing_id: string; card_id: string; price: number; title: string }[] {
    return admin.otherListings(this.ctx.s, category);
  }

  /** Applies background dynamics up to the clock's now (also done by every call). */
  syncNow(): void {
    sync(this.ctx);
  }

  /** Checks the model's invariants; returns the violations (empty when all hold). */
  audit(): string[] {
    return audit(this.ctx.s);
  }

  /** A JSON-able summary of the whole state for `GET /sim/v1/state`. */
  dump(): Json {
    const now = sync(this.ctx);
    return admin.dump(this.ctx.s, this.faults, now);
  }
}
