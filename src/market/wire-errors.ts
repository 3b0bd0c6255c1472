/**
 * Errors whose status or code the spec leaves open, as the simulator's world chooses them: the
 * codes of 401 and 403 bodies (`rules.auth_error_codes`) and the request-level errors of
 * sell-back, list and delist (`rules.holdings_errors`). In process they are the classes the HTTP
 * client builds from the same answer (a 409 or 422 of those requests is a BadRequestError with
 * that status), so the in-process API and HTTP still behave alike.
 */
import {
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  type PartnerApiError,
  UnauthorizedError,
} from '../api/errors.js';
import type { Rules } from './world-schema.js';

/** `e`, whose wire body also carries `code`. */
function withWireCode<E extends PartnerApiError>(e: E, code: string): E {
  const plain = e.toWire.bind(e);
  e.toWire = () => {
    const w = plain();
    return { ...w, body: { ...w.body, code } };
  };
  return e;
}

export type AuthCause = 'missing' | 'malformed' | 'unknown' | 'disabled' | 'scope' | 'unlinked';

const SPECIFIC: Record<AuthCause, string> = {
  missing: 'MISSING_API_KEY',
  malformed: 'INVALID_API_KEY',
  unknown: 'INVALID_API_KEY',
  disabled: 'API_KEY_DISABLED',
  scope: 'MISSING_SCOPE',
  unlinked: 'ACCOUNT_NOT_LINKED',
};

/** The 401 (key) or 403 (scope, link) for `cause`, with the world's code. */
export function authError(rules: Pick<Rules, 'auth_error_codes'>, cause: AuthCause, message: string) {
  const forbidden = cause === 'scope' || cause === 'unlinked';
  const e = forbidden ? new ForbiddenError(message) : new UnauthorizedError(message);
  if (rules.auth_error_codes === 'none') return e;
  return withWireCode(
    e,
    rules.auth_error_codes === 'generic' ? (forbidden ? 'FORBIDDEN' : 'UNAUTHORIZED') : SPECIFIC[cause],
  );
}

/**
 * Why a sell-back, listing or delisting request is refused as a whole: the card is not held,
 * the listing state is wrong (already listed, not listed), or the input is not acceptable
 * (price out of range, a body the schema refuses).
 */
export type HoldingsRefusal = 'not_held' | 'conflict' | 'invalid';

const REST = {
  not_held: [404, 'CARD_NOT_IN_VAULT'],
  conflict: [409, 'LISTING_STATE'],
  invalid: [422, 'INVALID_REQUEST'],
} as const;

export function holdingsError(
  rules: Pick<Rules, 'holdings_errors'>,
  why: HoldingsRefusal,
  message: string,
): PartnerApiError {
  switch (rules.holdings_errors) {
    case 'mixed':
      return why === 'not_held' ? new NotFoundError(message) : new BadRequestError(message);
    case 'bad_request':
      return new BadRequestError(message);
    case 'rest': {
      const [status, code] = REST[why];
      return withWireCode(
        status === 404 ? new NotFoundError(message) : new BadRequestError(message, status),
        code,
      );
    }
  }
}
