/**
 * The retry policy, as a pure function of (operation, error, attempt, random). The client applies
 * it and sleeps on its Clock; keeping it pure lets one table test pin every case down.
 *
 * Why the cases differ: reads and sell-back are safe to repeat (sell-back answers `already_sold`
 * for a pull paid once). Listing create/delete have no idempotency, so once a request may have
 * reached the service we must not send it again. Purchases are safe to repeat under the same key
 * only on a service that remembers the key; one that forgot it would charge again. So once a
 * purchase attempt may have reached the service, the client stops and reports it in doubt, and the
 * executor settles it by evidence first (src/bot/doubt/in-doubt.ts). The one exception is
 * `IDEMPOTENCY_IN_PROGRESS`: the service itself says it knows the key, so waiting and re-sending is safe.
 */
import {
  InDoubtError,
  OrderRefundedError,
  type PartnerApiError,
  RateLimitedError,
  ServerError,
  TransportError,
} from './errors.js';
import { OPERATIONS, type Operation, type RetryClass } from './operations.js';

export interface RetryPolicy {
  /** Total attempts of one call, the first included. */
  maxAttempts: number;
  /** Backoff of the first retry; doubles per attempt. */
  baseDelayMs: number;
  /** Ceiling of one backoff delay. */
  maxDelayMs: number;
  /** Wait before re-sending a purchase the service reports as still running (409 IN_PROGRESS). */
  inProgressDelayMs: number;
  /** A `RATE_LIMITED` wait longer than this is not slept through: the error goes to the caller. */
  maxRateLimitWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  inProgressDelayMs: 2_000,
  maxRateLimitWaitMs: 5 * 60_000,
});

export type RetryDecision =
  | { retry: true; delayMs: number }
  /** `error` is what the caller gets: the input error, or a more precise one (in doubt, refunded). */
  | { retry: false; error: PartnerApiError };

export type OperationClass = RetryClass;

export function operationClass(op: Operation): OperationClass {
  return OPERATIONS[op].retry;
}

/** Capped exponential backoff with "equal jitter": half fixed, half random, so it never collapses to 0. */
export function backoffMs(attempt: number, random: () => number, policy: RetryPolicy): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}

const isServerFault = (e: PartnerApiError): boolean =>
  e instanceof ServerError && !(e instanceof OrderRefundedError);

function inDoubt(e: PartnerApiError, why: string): InDoubtError {
  return new InDoubtError(`${why}: ${e.message}`, e.endpoint, { cause: e });
}

/** Whether the request that failed with `e` may have reached the service (and run there). */
export function mayHaveReached(e: PartnerApiError): boolean {
  if (e instanceof TransportError) return e.failure !== 'connect';
  return e instanceof ServerError || e.code === 'IDEMPOTENCY_IN_PROGRESS' || e.kind === 'invalid-data';
}

/**
 * Decides what to do after `attempt` (1-based) of `op` failed with `error`.
 * `random` returns a uniform number in [0, 1) (injected so the table test is deterministic).
 * `delivered`: an earlier attempt of this call may have reached the service (`mayHaveReached`).
 */
export function decideRetry(
  op: Operation,
  error: PartnerApiError,
  attempt: number,
  random: () => number,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  delivered = false,
): RetryDecision {
  const cls = operationClass(op);
  const attemptsLeft = attempt < policy.maxAttempts;
  const backoff = (): RetryDecision => ({ retry: true, delayMs: backoffMs(attempt, random, policy) });

  // After an attempt that may have been charged, a refusal (429, 400, 403…) says nothing about
  // that attempt: an honest service replays a known key and never refuses it.
  if (cls === 'purchase' && delivered && error.code !== 'IDEMPOTENCY_IN_PROGRESS')
    return { retry: false, error: inDoubt(error, 'an earlier attempt may have been charged') };

  if (error instanceof RateLimitedError) {
    // A listing write is not waited for: the sell side lists again at its next pass, and a sell
    // pass (a sell-back window closing) would otherwise wait behind it (the spec never rate-limits
    // listings; a server that does must not hold our sell-backs for minutes).
    if (cls === 'listing') return { retry: false, error };
    const delayMs = Math.max(0, error.retryAfterSeconds) * 1000;
    return attemptsLeft && delayMs <= policy.maxRateLimitWaitMs
      ? { retry: true, delayMs }
      : { retry: false, error };
  }
  if (error.code === 'IDEMPOTENCY_IN_PROGRESS') {
    return attemptsLeft && cls === 'purchase'
      ? { retry: true, delayMs: policy.inProgressDelayMs }
      : {
          retry: false,
          error: cls === 'purchase' ? inDoubt(error, 'order still running after retries') : error,
        };
  }

  if (error instanceof TransportError) {
    // A connect failure means nothing reached the service, so even a non-idempotent write may go again.
    const notSent = error.failure === 'connect';
    switch (cls) {
      case 'read':
      case 'sellback':
        return attemptsLeft ? backoff() : { retry: false, error };
      case 'purchase':
        if (notSent) return attemptsLeft ? backoff() : { retry: false, error };
        return { retry: false, error: inDoubt(error, 'purchase outcome unknown') };
      case 'listing':
        if (notSent) return attemptsLeft ? backoff() : { retry: false, error };
        return { retry: false, error: inDoubt(error, 'listing change may have been applied') };
    }
  }

  if (isServerFault(error)) {
    switch (cls) {
      case 'read':
      case 'sellback':
        return attemptsLeft ? backoff() : { retry: false, error };
      case 'purchase':
        // A 5xx other than the pack refund: the order may have run; settled by evidence, not re-sent here.
        return { retry: false, error: inDoubt(error, 'purchase outcome unknown') };
      case 'listing':
        // The spec calls a 500 safe to retry everywhere. Other 5xx come from proxies in front of the
        // service, which may have passed the write on: no idempotency here, so the caller must check.
        if (error.status === 500) return attemptsLeft ? backoff() : { retry: false, error };
        return { retry: false, error: inDoubt(error, 'listing change may have been applied') };
    }
  }

  return { retry: false, error };
}
