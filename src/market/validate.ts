/**
 * Request validation of the simulated service. Inputs are untyped (they may come straight from
 * JSON); every failure is a 400 naming the field, as the spec's error table says.
 */

import { BadRequestError } from '../api/errors.js';
import { MAX_PACKS_PER_REQUEST, MIN_PACKS_PER_REQUEST } from '../api/rules.js';
import {
  CATEGORIES,
  type Category,
  IDEMPOTENCY_KEY_RE,
  RISK_LEVELS,
  type RiskLevel,
} from '../api/schemas.js';

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function bad(message: string): BadRequestError {
  return new BadRequestError(message);
}

export function requireObject(body: unknown, what = 'request body'): Record<string, unknown> {
  if (!isObj(body)) throw bad(`${what} must be a JSON object`);
  return body;
}

export function idempotencyKey(v: unknown): string {
  if (v === undefined || v === null || v === '') throw bad('missing Idempotency-Key header');
  if (typeof v !== 'string' || !IDEMPOTENCY_KEY_RE.test(v))
    throw bad('Idempotency-Key must be 8 to 128 characters of A-Za-z0-9_-');
  return v;
}

export function category(v: unknown, field = 'category'): Category {
  if (v === undefined) return 'pokemon';
  if (typeof v !== 'string' || !(CATEGORIES as readonly string[]).includes(v))
    throw bad(`${field} must be one of ${CATEGORIES.join(', ')}`);
  return v as Category;
}

export function riskLevel(v: unknown): RiskLevel {
  if (v === undefined) return 'standard';
  if (typeof v !== 'string' || !(RISK_LEVELS as readonly string[]).includes(v))
    throw bad(`risk_level must be one of ${RISK_LEVELS.join(', ')}`);
  return v as RiskLevel;
}

export function requiredString(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length === 0)
    throw bad(`${field} is required and must be a non-empty string`);
  return v;
}

export function intInRange(v: unknown, field: string, fallback: number, min: number, max: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw bad(`${field} must be an integer from ${min} to ${max}`);
  return v;
}

export function usd(v: unknown, field: string, opts: { positive?: boolean } = {}): number {
  if (v === undefined || v === null) throw bad(`${field} is required`);
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (opts.positive && v === 0))
    throw bad(`${field} must be a ${opts.positive ? 'positive' : 'non-negative'} number of USD`);
  return v;
}

export interface PackPurchaseInput {
  pack_type: string;
  category: Category;
  quantity: number;
  risk_level: RiskLevel;
}

export function packPurchase(body: unknown): PackPurchaseInput {
  const b = requireObject(body);
  return {
    pack_type: requiredString(b.pack_type, 'pack_type'),
    category: category(b.category),
    quantity: intInRange(b.quantity, 'quantity', 1, MIN_PACKS_PER_REQUEST, MAX_PACKS_PER_REQUEST),
    risk_level: riskLevel(b.risk_level),
  };
}

export function cardPurchase(body: unknown): { card_id: string; max_price: number } {
  const b = requireObject(body);
  return { card_id: requiredString(b.card_id, 'card_id'), max_price: usd(b.max_price, 'max_price') };
}

export function sellBackItems(body: unknown): { card_id: string; pull_id: string }[] {
  const b = requireObject(body);
  const items = b.items;
  if (!Array.isArray(items) || items.length < 1 || items.length > 10)
    throw bad('items must be an array of 1 to 10 elements');
  return items.map((it, i) => {
    const o = requireObject(it, `items[${i}]`);
    return {
      card_id: requiredString(o.card_id, `items[${i}].card_id`),
      pull_id: requiredString(o.pull_id, `items[${i}].pull_id`),
    };
  });
}

/** A query's integer parameter; the HTTP layer passes strings, in-process callers numbers. */
export function queryInt(v: unknown, field: string, fallback: number, min: number, max: number): number {
  if (v === undefined) return fallback;
  const n = typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : v;
  return intInRange(n, field, fallback, min, max);
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
