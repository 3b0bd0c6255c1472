/**
 * The HTTP implementation of `PartnerApi`: global `fetch` with an undici Agent as dispatcher, every
 * request checked before IO, every response checked against its schema, failures typed
 * (errors.ts), retries per retry.ts, pacing per pacing.ts. The API key lives in a private field
 * and goes only into the Authorization header.
 */
import { inspect } from 'node:util';
import type { z } from 'zod';
import type { Clock } from '../core/clock.js';
import {
  errorFromResponse,
  isPartnerApiError,
  OrderRefundedError,
  type PartnerApiError,
  RequestValidationError,
  ResponseTooLargeError,
  SchemaError,
  TransportError,
} from './errors.js';
import { API_PREFIX, ENDPOINTS, OPERATIONS, type Operation } from './operations.js';
import { Pacer, type PacingOptions } from './pacing.js';
import type { PartnerApi } from './partner-api.js';
import { BodyTooLarge, DEFAULT_MAX_RESPONSE_BYTES, readCappedText } from './read-body.js';
import { checkIdempotencyKey, checkRequest, issuesOf } from './request-checks.js';
import {
  DEFAULT_RETRY_POLICY,
  decideRetry,
  mayHaveReached,
  operationClass,
  type RetryPolicy,
} from './retry.js';
import type {
  Account,
  CardPurchaseRequest,
  CardPurchaseResponse,
  CreateListingRequest,
  DeleteListingRequest,
  DelistResponse,
  Identity,
  Listing,
  PackList,
  PackListQuery,
  PackPool,
  PackPoolQuery,
  PackPurchaseRequest,
  PackPurchaseResponse,
  PurchaseReportPage,
  PurchaseReportQuery,
  SellBackItem,
  SellBackResponse,
  ShopCardsPage,
  ShopCardsQuery,
  VaultPage,
  VaultQuery,
} from './schemas.js';
import { transportError } from './transport-errors.js';
import { Agent } from './undici-agent.js';

export interface Timeouts {
  /** TCP (and TLS) connect. */
  connectMs: number;
  /** From request sent to response headers received. */
  headersMs: number;
  /** Longest gap between two chunks of the response body. */
  bodyMs: number;
  /** Whole attempt, first byte out to last byte in (a wall-time deadline, like the three above). */
  requestMs: number;
}

const DEFAULT_TIMEOUTS: Readonly<Timeouts> = Object.freeze({
  connectMs: 10_000,
  headersMs: 30_000,
  bodyMs: 30_000,
  requestMs: 60_000,
});

export interface ResponseEvent {
  /** `METHOD /path` (ENDPOINTS). */
  endpoint: string;
  /** HTTP status, or 'transport' when no complete answer came back. */
  status: number | 'transport';
  /** On the injected clock. */
  durationMs: number;
}

export interface HttpClientOptions {
  /** Service root; operations go under `${baseUrl}/api/partner/v1`. */
  baseUrl: string;
  apiKey: string;
  clock: Clock;
  timeouts?: Partial<Timeouts>;
  retry?: Partial<RetryPolicy>;
  /** A shared Pacer (one per key), or options for a Pacer of this client's own. */
  pacing?: Pacer | Partial<PacingOptions>;
  /** Called once per HTTP attempt (metrics). Must not throw; errors it throws are ignored. */
  onResponse?: (event: ResponseEvent) => void;
  /** Jitter source in [0, 1); defaults to Math.random. */
  random?: () => number;
  /** Largest response body read (bytes; default 32 MiB, `api.max_response_mb`): RESPONSE_TOO_LARGE beyond. */
  maxResponseBytes?: number;
}

/** The validated answer of an operation: its response schema's type. */
type Answer<O extends Operation> = z.infer<(typeof OPERATIONS)[O]['response']>;

/** One call's input; method, path and response schema come from the operations table. */
interface Call {
  query?: Record<string, unknown> | undefined;
  body?: unknown;
  idempotencyKey?: string;
}

/** Keys of the idempotency map kept per client; older keys are forgotten first beyond this. */
const MAX_REMEMBERED_KEYS = 10_000;

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

export class HttpPartnerApi implements PartnerApi {
  readonly #apiKey: string;
  readonly #agent: Agent;
  readonly #clock: Clock;
  readonly #timeouts: Timeouts;
  readonly #policy: RetryPolicy;
  readonly #pacer: Pacer;
  readonly #onResponse: ((event: ResponseEvent) => void) | undefined;
  readonly #random: () => number;
  readonly #maxResponseBytes: number;
  /** Idempotency key → the operation and canonical body first sent under it. */
  readonly #usedKeys = new Map<string, string>();
  /** The last `Date` header the server sent, and our clock when it arrived. */
  #serverDate: { serverMs: number; localMs: number } | null = null;
  readonly baseUrl: string;

  /**
   * The server's time now as its last `Date` header said it, moved on by our clock since (null
   * before any answer carried one). A `Date` header has one-second resolution: so has this.
   */
  serverNow(): number | null {
    const d = this.#serverDate;
    return d === null ? null : d.serverMs + (this.#clock.now() - d.localMs);
  }

  constructor(options: HttpClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new RangeError(`baseUrl is not a valid URL: ${JSON.stringify(options.baseUrl)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new RangeError(`baseUrl must be http(s), got ${url.protocol}`);
    // The message never repeats the key, not even a prefix.
    if (typeof options.apiKey !== 'string' || !/^[\x21-\x7e]+$/.test(options.apiKey))
      throw new RangeError('apiKey must be a non-empty string of printable ASCII without spaces');
    this.baseUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    this.#apiKey = options.apiKey;
    this.#clock = options.clock;
    this.#timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.#policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.#pacer = options.pacing instanceof Pacer ? options.pacing : new Pacer(options.clock, options.pacing);
    this.#onResponse = options.onResponse;
    this.#random = options.random ?? Math.random;
    this.#maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.#agent = new Agent({
      connect: { timeout: this.#timeouts.connectMs },
      headersTimeout: this.#timeouts.headersMs,
      bodyTimeout: this.#timeouts.bodyMs,
      keepAliveTimeout: 30_000,
    });
  }

  // ---------- operations ----------

  async purchasePacks(body: PackPurchaseRequest, idempotencyKey: string): Promise<PackPurchaseResponse> {
    return this.#purchase('purchasePacks', body, idempotencyKey);
  }

  async purchaseCard(body: CardPurchaseRequest, idempotencyKey: string): Promise<CardPurchaseResponse> {
    return this.#purchase('purchaseCard', body, idempotencyKey);
  }

  async sellBack(items: SellBackItem[]): Promise<SellBackResponse> {
    return this.#call('sellBack', { body: checkRequest('sellBack', { items }) });
  }

  async createListing(body: CreateListingRequest): Promise<Listing> {
    return this.#call('createListing', { body: checkRequest('createListing', body) });
  }

  async deleteListing(body: DeleteListingRequest): Promise<DelistResponse> {
    return this.#call('deleteListing', { body: checkRequest('deleteListing', body) });
  }

  async listPacks(query?: PackListQuery): Promise<PackList> {
    return this.#call('listPacks', { query: checkRequest('listPacks', query) as Record<string, unknown> });
  }

  async getPackPool(query: PackPoolQuery): Promise<PackPool> {
    return this.#call('getPackPool', {
      query: checkRequest('getPackPool', query) as Record<string, unknown>,
    });
  }

  async listShopCards(query?: ShopCardsQuery): Promise<ShopCardsPage> {
    return this.#call('listShopCards', {
      query: checkRequest('listShopCards', query) as Record<string, unknown>,
    });
  }

  async getVault(query?: VaultQuery): Promise<VaultPage> {
    return this.#call('getVault', { query: checkRequest('getVault', query) as Record<string, unknown> });
  }

  async getAccount(): Promise<Account> {
    return this.#call('getAccount', {});
  }

  async getIdentity(): Promise<Identity> {
    return this.#call('getIdentity', {});
  }

  async getPurchaseReport(query?: PurchaseReportQuery): Promise<PurchaseReportPage> {
    return this.#call('getPurchaseReport', {
      query: checkRequest('getPurchaseReport', query) as Record<string, unknown>,
    });
  }

  /** Closes idle keep-alive connections and refuses new requests. */
  async close(): Promise<void> {
    await this.#agent.close();
  }

  /** Forcibly ends every connection, in-flight requests included. */
  async destroy(): Promise<void> {
    await this.#agent.destroy();
  }

  toString(): string {
    return `HttpPartnerApi(${this.baseUrl})`;
  }

  toJSON(): { baseUrl: string } {
    return { baseUrl: this.baseUrl };
  }

  [inspect.custom](): string {
    return this.toString();
  }

  // ---------- machinery ----------

  async #purchase<O extends 'purchasePacks' | 'purchaseCard'>(
    op: O,
    body: unknown,
    key: string,
  ): Promise<Answer<O>> {
    const checked = checkRequest(op, body);
    const idempotencyKey = checkIdempotencyKey(op, key);
    const fingerprint = `${op} ${canonicalJson(checked)}`;
    const seen = this.#usedKeys.get(idempotencyKey);
    if (seen !== undefined && seen !== fingerprint)
      throw new RequestValidationError(
        [{ path: 'Idempotency-Key', message: 'already used by this client for a different order (body)' }],
        ENDPOINTS[op],
      );
    if (seen === undefined) {
      this.#usedKeys.set(idempotencyKey, fingerprint);
      if (this.#usedKeys.size > MAX_REMEMBERED_KEYS) {
        const oldest = this.#usedKeys.keys().next().value;
        if (oldest !== undefined) this.#usedKeys.delete(oldest);
      }
    }
    return this.#call(op, { body: checked, idempotencyKey });
  }

  #call<O extends Operation>(op: O, call: Call): Promise<Answer<O>> {
    const cls = operationClass(op);
    const run = async (): Promise<Answer<O>> => {
      let delivered = false;
      for (let attempt = 1; ; attempt++) {
        let error: PartnerApiError;
        try {
          return await this.#pacer.attempt(cls, () => this.#send(op, call));
        } catch (e) {
          error = isPartnerApiError(e)
            ? e
            : new TransportError('other', `${ENDPOINTS[op]}: unexpected failure`, ENDPOINTS[op], {
                cause: e,
              });
        }
        const decision = decideRetry(op, error, attempt, this.#random, this.#policy, delivered);
        delivered ||= mayHaveReached(error);
        if (!decision.retry) throw decision.error;
        await this.#clock.sleep(decision.delayMs);
      }
    };
    return cls === 'purchase' ? this.#pacer.exclusivePurchase(run) : run();
  }

  #report(endpoint: string, status: number | 'transport', started: number): void {
    if (!this.#onResponse) return;
    try {
      this.#onResponse({ endpoint, status, durationMs: this.#clock.now() - started });
    } catch {
      // A metrics hook must never change the outcome of a request.
    }
  }

  async #send<O extends Operation>(op: O, call: Call): Promise<Answer<O>> {
    const { method, path, response: schema } = OPERATIONS[op];
    const endpoint = ENDPOINTS[op];
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Bearer ${this.#apiKey}`,
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
    const url = `${this.baseUrl}${API_PREFIX}${path}${queryString(call.query)}`;
    const started = this.#clock.now();
    // The deadline (wall time) covers the headers and the body, and is cleared once the body is
    // read: an AbortSignal.timeout keeps its timer, and undici's listener on it, for the whole
    // deadline after every request (a soak at 5000× held thousands of them).
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new DOMException('request deadline exceeded', 'TimeoutError')),
      this.#timeouts.requestMs,
    );
    timer.unref();

    let response: Response;
    let text: string;
    try {
      // The cast: undici 7's Agent and the undici bundled in Node's fetch types differ, not at runtime.
      const init = {
        method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        // A redirect is not in the spec; following one could carry the request somewhere unexpected.
        redirect: 'manual',
        signal: deadline.signal,
        dispatcher: this.#agent,
      };
      response = await fetch(url, init as unknown as RequestInit);
    } catch (e) {
      clearTimeout(timer);
      this.#report(endpoint, 'transport', started);
      throw transportError(e, endpoint, 'request');
    }
    try {
      text = await readCappedText(response, this.#maxResponseBytes);
    } catch (e) {
      if (e instanceof BodyTooLarge) {
        this.#report(endpoint, response.status, started);
        throw new ResponseTooLargeError(e.limitBytes, `${endpoint}: ${e.message}`, endpoint);
      }
      this.#report(endpoint, 'transport', started);
      throw transportError(e, endpoint, 'body');
    } finally {
      clearTimeout(timer);
    }
    this.#report(endpoint, response.status, started);
    const date = Date.parse(response.headers.get('date') ?? '');
    if (Number.isFinite(date)) this.#serverDate = { serverMs: date, localMs: this.#clock.now() };

    if (response.status < 200 || response.status > 299) {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const error = errorFromResponse(response.status, body, endpoint, response.headers.get('retry-after'));
      if (op === 'purchasePacks' && response.status === 500)
        throw new OrderRefundedError(
          `${error.message} (the order was refunded; the key is released)`,
          500,
          endpoint,
        );
      throw error;
    }

    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new SchemaError(
        [{ path: '', message: `malformed JSON (${e instanceof Error ? e.message : String(e)})` }],
        endpoint,
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new SchemaError(issuesOf(parsed.error), endpoint);
    return parsed.data as Answer<O>;
  }
}

export function createHttpClient(options: HttpClientOptions): HttpPartnerApi {
  return new HttpPartnerApi(options);
}
