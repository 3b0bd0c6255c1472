/**
 * Who is calling: the Authorization header read against the world's keys, and the key's scopes and
 * account link checked against the operation (401 for the key itself, 403 for what it may do).
 */
import { ForbiddenError, UnauthorizedError } from '../api/errors.js';
import { OPERATIONS, type Operation } from '../api/operations.js';
import type { AccountState, KeyState, MarketState } from './state.js';

export interface Caller {
  key: KeyState;
  account: AccountState | null;
}

export function authorize(s: MarketState, header: string | undefined, op: Operation): Caller {
  if (!header) throw new UnauthorizedError('missing Authorization header');
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m) throw new UnauthorizedError('malformed Authorization header; expected "Bearer <API_KEY>"');
  const key = s.keys.get(m[1]!);
  if (!key) throw new UnauthorizedError('unknown API key');
  if (key.disabled) throw new UnauthorizedError('API key is disabled');
  const { scope, linked } = OPERATIONS[op];
  if (scope && !key.scopes.has(scope)) throw new ForbiddenError(`key lacks the scope '${scope}'`);
  const account = key.accountId ? (s.accounts.get(key.accountId) ?? null) : null;
  if (linked && !account) throw new ForbiddenError('this action needs a key linked to a user account');
  return { key, account };
}
