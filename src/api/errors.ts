/**
 * Every error the Partner API client can raise, in one module (like undici's errors).
 * Each class has a stable string `code` and a `kind` the runner acts on:
 * - retryable:    try again later (same idempotency key and body for purchases);
 * - rejected:     the service said no to this request; re-plan, do not resend as is;
 * - fatal:        configuration or programming error (bad key, missing scope, key reuse); stop;
 * - invalid-data: a response or request failed validation; nothing was acted on.
 * The in-process market throws the same classes, and the simulator's server serialises them with
 * `toWire()`, so one table describes both sides. Messages never contain the API key.
 */
import { ENDPOINTS } from './operations.js';
import type { ErrorBody } from './schemas.js';

export type ErrorKind = 'retryable' | 'rejected' | 'fatal' | 'invalid-data';

export interface WireError {
  status: number;
  body: ErrorBody;
  headers?: Record<string, string>;
}

export abstract class PartnerApiError extends Error {
  abstract readonly code: string;
  abstract readonly kind: ErrorKind;
  /** HTTP status when the error came from (or maps to) a response. */
  readonly status: number | undefined = undefined;
  /** `METHOD /path` of the operation, when known. */
  endpoint: string | undefined;

  constructor(message: string, endpoint?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.endpoint = endpoint;
  }

  /** Whether the spec gives this error a `code` in the body (vs. an HTTP status only). */
  static readonly specCode: boolean = false;

  /** The JSON error body the service would send for this error. */
  toWire(): WireError {
    return { status: this.status ?? 500, body: { error: this.message } };
  }
}

abstract class CodedError extends PartnerApiError {
  static override readonly specCode: boolean = true;
  override toWire(): WireError {
    return { status: this.status ?? 500, body: { error: this.message, code: this.code } };
  }
}

// ----- errors with a spec `code` -----

export class IdempotencyInProgressError extends CodedError {
  readonly code = 'IDEMPOTENCY_IN_PROGRESS' as const;
  readonly kind = 'retryable' as const;
  override readonly status = 409;
}

export class PriceChangedError extends CodedError {
  readonly code = 'PRICE_CHANGED' as const;
  readonly kind = 'rejected' as const;
  override readonly status = 409;
  constructor(
    readonly cardId: string,
    readonly price: number,
    readonly maxPrice: number,
    message = `price ${price} is above max_price ${maxPrice}`,
    endpoint?: string,
  ) {
    super(message, endpoint);
  }
  override toWire(): WireError {
    const w = super.toWire();
    return { ...w, body: { ...w.body, card_id: this.cardId, price: this.price, max_price: this.maxPrice } };
  }
}

export class CardNoLongerAvailableError extends CodedError {
  readonly code = 'CARD_NO_LONGER_AVAILABLE' as const;
  readonly kind = 'rejected' as const;
  override readonly status = 409;
}

export class OwnListingError extends CodedError {
  readonly code = 'OWN_LISTING' as const;
  readonly kind = 'rejected' as const;
  override readonly status = 409;
}

/** Same key, different body: always a bug on our side, so it stops the bot. */
export class IdempotencyKeyReusedError extends CodedError {
  readonly code = 'IDEMPOTENCY_KEY_REUSED' as const;
  readonly kind = 'fatal' as const;
  override readonly status = 422;
}

export class RateLimitedError extends CodedError {
  readonly code = 'RATE_LIMITED' as const;
  readonly kind = 'retryable' as const;
  override readonly status = 429;
  constructor(
    readonly retryAfterSeconds: number,
    message = `too soon after the last purchase; retry after ${retryAfterSeconds}s`,
    endpoint?: string,
  ) {
    super(message, endpoint);
  }
  override toWire(): WireError {
    const w = super.toWire();
    return {
      ...w,
      body: { ...w.body, retry_after_seconds: this.retryAfterSeconds },
      headers: { 'retry-after': String(this.retryAfterSeconds) },
    };
  }
}

export class DailyLimitReachedError extends CodedError {
  readonly code = 'DAILY_LIMIT_REACHED' as const;
  readonly kind = 'rejected' as const;
  override readonly status = 429;
  constructor(
    readonly limit: number,
    readonly used: number,
    readonly resetsAt: string,
    message = `daily pack ceiling reached (${used}/${limit}); resets at ${resetsAt}`,
    endpoint?: string,
  ) {
    super(message, endpoint);
  }
  override toWire(): WireError {
    const w = super.toWire();
    return { ...w, body: { ...w.body, limit: this.limit, used: this.used, resets_at: this.resetsAt } };
  }
}

export class DailyCardLimitReachedError extends CodedError {
  readonly code = 'DAILY_CARD_LIMIT_REACHED' as const;
  readonly kind = 'rejected' as const;
  override readonly status = 429;
}

// ----- errors known by HTTP status only -----

export class BadRequestError extends PartnerApiError {
  readonly code = 'BAD_REQUEST' as const;
  readonly kind = 'rejected' as const;
  override readonly status: number;
  /** `status`: 400, or the 409 or 422 of a sell-back or listing request without a spec code. */
  constructor(message: string, status = 400, endpoint?: string) {
    super(message, endpoint);
    this.status = status;
  }
}

export class UnauthorizedError extends PartnerApiError {
  readonly code = 'UNAUTHORIZED' as const;
  readonly kind = 'fatal' as const;
  override readonly status = 401;
}

export class ForbiddenError extends PartnerApiError {
  readonly code = 'FORBIDDEN' as const;
  readonly kind = 'fatal' as const;
  override readonly status = 403;
}

export class NotFoundError extends PartnerApiError {
  readonly code = 'NOT_FOUND' as const;
  readonly kind = 'rejected' as const;
  override readonly status = 404;
}

/** 5xx. Safe to retry with backoff (reads, sell-back). */
export class ServerError extends PartnerApiError {
  readonly code: string = 'SERVER_ERROR';
  readonly kind: ErrorKind = 'retryable';
  override readonly status: number;
  constructor(message: string, status = 500, endpoint?: string) {
    super(message, endpoint);
    this.status = status;
  }
}

/**
 * A 500 on pack purchase: a pack failed to open and the whole order was refunded. The key is
 * released; the caller decides (re-score, then re-run with the same key and body, or drop it).
 */
export class OrderRefundedError extends ServerError {
  override readonly code = 'ORDER_REFUNDED';
  override readonly kind = 'rejected' as const;
}

/** Any other status the spec does not list (e.g. 405, 413, 418). */
export class UnexpectedStatusError extends PartnerApiError {
  readonly code = 'UNEXPECTED_STATUS' as const;
  readonly kind = 'fatal' as const;
  override readonly status: number;
  constructor(message: string, status: number, endpoint?: string) {
    super(message, endpoint);
    this.status = status;
  }
}

// ----- transport and data -----

export type TransportFailure = 'connect' | 'reset' | 'timeout' | 'aborted' | 'other';

/** The request did not get a complete HTTP answer. */
export class TransportError extends PartnerApiError {
  readonly code = 'TRANSPORT_FAILED' as const;
  readonly kind = 'retryable' as const;
  constructor(
    readonly failure: TransportFailure,
    message: string,
    endpoint?: string,
    options?: { cause?: unknown },
  ) {
    super(message, endpoint, options);
  }
}

/**
 * A write whose outcome is unknown (transport failure after the request may have reached the
 * service, on an operation that cannot be safely re-sent). Resolved by reading state (vault,
 * account, purchase report, ledger; src/bot/doubt/in-doubt.ts), not by a blind re-send: a pack purchase
 * is never re-sent, a card purchase's key only once its card is in our vault.
 */
export class InDoubtError extends PartnerApiError {
  readonly code = 'IN_DOUBT' as const;
  readonly kind = 'retryable' as const;
}

export interface SchemaIssue {
  path: string;
  message: string;
}

/** A response that does not match the spec: nothing in it is acted on. */
export class SchemaError extends PartnerApiError {
  readonly code = 'SCHEMA_INVALID' as const;
  readonly kind = 'invalid-data' as const;
  constructor(
    readonly issues: SchemaIssue[],
    endpoint?: string,
    message = `invalid response${endpoint ? ` from ${endpoint}` : ''}: ${issues
      .slice(0, 5)
      .map((i) => `${i.path || '(root)'}: ${i.message}`)
      .join('; ')}`,
  ) {
    super(message, endpoint);
  }
}

/**
 * An answer larger than the client's cap (`api.max_response_mb`), refused before it could exhaust
 * memory: nothing in it is acted on. A purchase answered this way may have been charged, so it is
 * in doubt like any lost answer.
 */
export class ResponseTooLargeError extends PartnerApiError {
  readonly code = 'RESPONSE_TOO_LARGE' as const;
  readonly kind = 'invalid-data' as const;
  constructor(
    readonly limitBytes: number,
    message: string,
    endpoint?: string,
  ) {
    super(message, endpoint);
  }
}

/** A request packbot refused to send because it breaks a spec rule (checked locally, before IO). */
export class RequestValidationError extends PartnerApiError {
  readonly code = 'INVALID_REQUEST' as const;
  readonly kind = 'invalid-data' as const;
  constructor(
    readonly issues: SchemaIssue[],
    endpoint?: string,
    message = `request not sent${endpoint ? ` to ${endpoint}` : ''}: ${issues
      .map((i) => `${i.path || '(root)'}: ${i.message}`)
      .join('; ')}`,
  ) {
    super(message, endpoint);
  }
}

/** Every class with a spec `code`, keyed by that code (kept in sync with the spec by a test). */
export const ERRORS_BY_SPEC_CODE = {
  IDEMPOTENCY_IN_PROGRESS: IdempotencyInProgressError,
  PRICE_CHANGED: PriceChangedError,
  CARD_NO_LONGER_AVAILABLE: CardNoLongerAvailableError,
  OWN_LISTING: OwnListingError,
  IDEMPOTENCY_KEY_REUSED: IdempotencyKeyReusedError,
  RATE_LIMITED: RateLimitedError,
  DAILY_LIMIT_REACHED: DailyLimitReachedError,
  DAILY_CARD_LIMIT_REACHED: DailyCardLimitReachedError,
} as const;

/** Status-only errors of the spec's table, keyed by status. */
export const ERRORS_BY_STATUS = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  500: ServerError,
} as const;

export const isPartnerApiError = (e: unknown): e is PartnerApiError => e instanceof PartnerApiError;

/**
 * "Request-level error conditions for sell-back, list and delist: not shown." A 409 or 422 there
 * with a code the spec does not name refuses that one request, which moves no money: re-plan, as
 * after a 400, rather than stop the bot (a purchase's unknown 409 stays fatal: it may be running).
 */
const OPEN_REFUSALS: ReadonlySet<string> = new Set([
  ENDPOINTS.sellBack,
  ENDPOINTS.createListing,
  ENDPOINTS.deleteListing,
]);

/**
 * Builds the typed error for an HTTP error response. `body` is the parsed JSON (or undefined when
 * it was not JSON); `retryAfterHeader` is the raw `Retry-After` header.
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  endpoint: string,
  retryAfterHeader?: string | null,
): PartnerApiError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const message = typeof b.error === 'string' ? b.error : `HTTP ${status}`;
  const code = typeof b.code === 'string' ? b.code : undefined;
  const num = (v: unknown): number | undefined =>
    typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const withEndpoint = <E extends PartnerApiError>(e: E): E => {
    e.endpoint = endpoint;
    return e;
  };
  switch (code) {
    case 'IDEMPOTENCY_IN_PROGRESS':
      return withEndpoint(new IdempotencyInProgressError(message));
    case 'PRICE_CHANGED':
      return withEndpoint(
        new PriceChangedError(
          str(b.card_id) ?? '',
          num(b.price) ?? Number.NaN,
          num(b.max_price) ?? Number.NaN,
          message,
        ),
      );
    case 'CARD_NO_LONGER_AVAILABLE':
      return withEndpoint(new CardNoLongerAvailableError(message));
    case 'OWN_LISTING':
      return withEndpoint(new OwnListingError(message));
    case 'IDEMPOTENCY_KEY_REUSED':
      return withEndpoint(new IdempotencyKeyReusedError(message));
    case 'RATE_LIMITED': {
      const header = retryAfterHeader != null ? Number.parseInt(retryAfterHeader, 10) : Number.NaN;
      const seconds = num(b.retry_after_seconds) ?? (Number.isFinite(header) ? header : 60);
      return withEndpoint(new RateLimitedError(seconds, message));
    }
    case 'DAILY_LIMIT_REACHED':
      return withEndpoint(
        new DailyLimitReachedError(num(b.limit) ?? 0, num(b.used) ?? 0, str(b.resets_at) ?? '', message),
      );
    case 'DAILY_CARD_LIMIT_REACHED':
      return withEndpoint(new DailyCardLimitReachedError(message));
  }
  if ((status === 409 || status === 422) && OPEN_REFUSALS.has(endpoint))
    return withEndpoint(new BadRequestError(message, status));
  switch (status) {
    case 400:
      return withEndpoint(new BadRequestError(message));
    case 401:
      return withEndpoint(new UnauthorizedError(message));
    case 403:
      return withEndpoint(new ForbiddenError(message));
    case 404:
      return withEndpoint(new NotFoundError(message));
  }
  if (status >= 500) return new ServerError(message, status, endpoint);
  return new UnexpectedStatusError(message, status, endpoint);
}
