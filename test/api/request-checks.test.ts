import { describe, expect, it } from 'vitest';
import { RequestValidationError } from '../../src/api/errors.js';
import type { Operation } from '../../src/api/partner-api.js';
import { checkIdempotencyKey, checkRequest } from '../../src/api/request-checks.js';
import { formatPath } from '../../src/core/format-path.js';

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ card_id: `c${i}`, pull_id: `p${i}` }));

type Row = [label: string, op: Operation, input: unknown, badPath: string | null];

// badPath null: accepted.
const TABLE: Row[] = [
  ['pack purchase minimal', 'purchasePacks', { pack_type: 'gold' }, null],
  [
    'pack purchase full',
    'purchasePacks',
    { pack_type: 'gold', category: 'watches', quantity: 10, risk_level: 'aggressive' },
    null,
  ],
  ['quantity 0', 'purchasePacks', { pack_type: 'gold', quantity: 0 }, 'quantity'],
  ['quantity 11', 'purchasePacks', { pack_type: 'gold', quantity: 11 }, 'quantity'],
  ['quantity 1.5', 'purchasePacks', { pack_type: 'gold', quantity: 1.5 }, 'quantity'],
  ['unknown category', 'purchasePacks', { pack_type: 'gold', category: 'stamps' }, 'category'],
  [
    'unknown risk level (Hot is a label)',
    'purchasePacks',
    { pack_type: 'gold', risk_level: 'hot' },
    'risk_level',
  ],
  ['missing pack_type', 'purchasePacks', {}, 'pack_type'],
  ['unknown field', 'purchasePacks', { pack_type: 'gold', promo: 'X' }, ''],
  ['card purchase', 'purchaseCard', { card_id: 'c', max_price: 3.5 }, null],
  ['card purchase without max_price', 'purchaseCard', { card_id: 'c' }, 'max_price'],
  ['card purchase negative max_price', 'purchaseCard', { card_id: 'c', max_price: -1 }, 'max_price'],
  ['sell-back 1 item', 'sellBack', { items: items(1) }, null],
  ['sell-back 10 items', 'sellBack', { items: items(10) }, null],
  ['sell-back 0 items', 'sellBack', { items: [] }, 'items'],
  ['sell-back 11 items', 'sellBack', { items: items(11) }, 'items'],
  ['sell-back item without pull_id', 'sellBack', { items: [{ card_id: 'c' }] }, 'items[0].pull_id'],
  ['listing', 'createListing', { card_id: 'c', price: 20 }, null],
  ['listing at price 0', 'createListing', { card_id: 'c', price: 0 }, 'price'],
  ['delist', 'deleteListing', { card_id: 'c' }, null],
  ['pack list default', 'listPacks', undefined, null],
  ['pack list category', 'listPacks', { category: 'riftbound' }, null],
  ['pack list bad category', 'listPacks', { category: 'Pokemon' }, 'category'],
  ['pool needs pack_type', 'getPackPool', { risk_level: 'chill' }, 'pack_type'],
  ['shop cards per_page 1000', 'listShopCards', { per_page: 1000 }, null],
  ['shop cards per_page 1001', 'listShopCards', { per_page: 1001 }, 'per_page'],
  ['shop cards page 0', 'listShopCards', { page: 0 }, 'page'],
  ['vault per_page 200', 'getVault', { per_page: 200 }, null],
  ['vault per_page 201', 'getVault', { per_page: 201 }, 'per_page'],
  ['report per_page 1001', 'getPurchaseReport', { per_page: 1001 }, 'per_page'],
  [
    'report window 31 days',
    'getPurchaseReport',
    { since: '2026-01-01T00:00:00Z', until: '2026-02-01T00:00:00Z' },
    null,
  ],
  [
    'report window 31 days + 1 s',
    'getPurchaseReport',
    { since: '2026-01-01T00:00:00Z', until: '2026-02-01T00:00:01Z' },
    'until',
  ],
  [
    'report window inverted',
    'getPurchaseReport',
    { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' },
    'since',
  ],
  ['report malformed since', 'getPurchaseReport', { since: 'yesterday' }, 'since'],
  ['account takes nothing', 'getAccount', undefined, null],
  ['account refuses parameters', 'getAccount', { page: 1 }, ''],
];

describe('checkRequest', () => {
  it.each(TABLE)('%s', (_l, op, input, badPath) => {
    if (badPath === null) {
      expect(() => checkRequest(op, input)).not.toThrow();
      return;
    }
    let err: unknown;
    try {
      checkRequest(op, input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RequestValidationError);
    const rve = err as RequestValidationError;
    expect(rve.issues.map((i) => i.path)).toContain(badPath);
    expect(rve.endpoint).toMatch(/^(GET|POST|DELETE) \//);
    expect(rve.message).toContain(rve.endpoint!);
  });
});

describe('checkIdempotencyKey', () => {
  it.each([
    ['a'.repeat(8), true],
    ['A-z_0-9-xyz', true],
    ['a'.repeat(128), true],
    ['a'.repeat(7), false],
    ['a'.repeat(129), false],
    ['has space1', false],
    ['dots.are.bad', false],
    [42, false],
  ])('%s → %s', (key, ok) => {
    if (ok) expect(checkIdempotencyKey('purchasePacks', key)).toBe(key);
    else
      expect(() => checkIdempotencyKey('purchaseCard', key)).toThrow(
        typeof key === 'string' ? /Idempotency-Key: must be 8 to 128/ : /Idempotency-Key: /,
      );
  });
});

describe('formatPath', () => {
  it('renders zod paths as a.b[2].c', () => {
    expect(formatPath(['pulls', 0, 'item', 'market_value'])).toBe('pulls[0].item.market_value');
    expect(formatPath([])).toBe('');
  });
});
