/**
 * Who is calling: the Authorization header read against the world's keys, and the key's scopes and
 * account link checked against the operation (401 for the key itself, 403 for what it may do; their
 * codes are the world's, wire-errors.ts).
 */
import { OPERATIONS, type Operation } from '../api/operations.js';
import type { AccountState, KeyState, MarketState } from './state.js';
import { authError } from './wire-errors.js';

export interface Caller {
  key: KeyState;
  account: AccountState | null;
}

export function authorize(s: MarketState, header: string | undefined, op: Operation): Caller {
  const rules = s.world.rules;
  if (!header) throw authError(rules, 'missing', 'missing Authorization header');
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m) throw authError(rules, 'malformed', 'malformed Authorization header; expected "Bearer <API_KEY>"');
  const key = s.keys.get(m[1]!);
  if (!key) throw authError(rules, 'unknown', 'unknown API key');
  if (key.disabled) throw authError(rules, 'disabled', 'API key is disabled');
  const { scope, linked } = OPERATIONS[op];
  if (scope && !key.scopes.has(scope)) throw authError(rules, 'scope', `key lacks the scope '${scope}'`);
  const account = key.accountId ? (s.accounts.get(key.accountId) ?? null) : null;
  if (linked && !account)
    throw authError(rules, 'unlinked', 'this action needs a key linked to a user account');
  return { key, account };
}
