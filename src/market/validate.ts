/**
 * The simulator's own request checks beyond the schemas (src/market/request.ts reads every body and
 * query with the operations table's schemas): the Idempotency-Key header, and timestamps parsed
 * strictly (no rolled-over dates). Every failure is a 400 naming the field.
 */

import { BadRequestError } from '../api/errors.js';
import { IDEMPOTENCY_KEY_RE } from '../api/schemas.js';

export function bad(message: string): BadRequestError {
  return new BadRequestError(message);
}

export function idempotencyKey(v: unknown): string {
  if (v === undefined || v === null || v === '') throw bad('missing Idempotency-Key header');
  if (typeof v !== 'string' || !IDEMPOTENCY_KEY_RE.test(v))
    throw bad('Idempotency-Key must be 8 to 128 characters of A-Za-z0-9_-');
  return v;
}

export function timestamp(v: unknown, field: string): number | undefined {
  if (v === undefined) return undefined;
  const re = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(:(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
  const m = typeof v === 'string' ? re.exec(v) : null;
  // Date.parse rolls impossible fields over (Feb 30 -> Mar 2, 24:00 -> next day): reject them.
  const [y, mo, d, h, mi, sec] = m ? [m[1], m[2], m[3], m[4], m[5], m[7] ?? '0'].map(Number) : [];
  const real =
    m !== null &&
    mo! >= 1 &&
    mo! <= 12 &&
    d! >= 1 &&
    d! <= new Date(Date.UTC(y!, mo!, 0)).getUTCDate() &&
    h! <= 23 &&
    mi! <= 59 &&
    sec! <= 59;
  const t = real ? Date.parse(v as string) : Number.NaN;
  if (!Number.isFinite(t)) throw bad(`${field} must be an ISO 8601 timestamp with a time zone`);
  return t;
}
