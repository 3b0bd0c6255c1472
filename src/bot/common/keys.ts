/**
 * Idempotency keys: random, never derived from time or content, so two orders can never share
 * one by accident, and a retry shares it only because the ledger handed the same key back.
 */
import { randomBytes } from 'node:crypto';

export function newIdempotencyKey(account: string): string {
  // base64url has only A-Za-z0-9_-; 18 bytes give 24 characters (144 random bits).
  return `pb_${account.slice(0, 32)}_${randomBytes(18).toString('base64url')}`;
}
