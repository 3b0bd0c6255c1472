import type { PackPurchaseResponse } from '../../src/api/schemas.js';
import type { Ledger, NewIntent } from '../../src/store/ledger.js';

export const T0 = Date.UTC(2026, 0, 1, 12);

export function cardPull(id: string, value: number, validUntil: string) {
  return {
    pull_id: `pull-${id}`,
    kind: 'card' as const,
    item: { id: `card-${id}`, name: `Card ${id}`, market_value: value },
    value,
    hit: { rarity_tier: 'common', bucket: 'b1', bucket_odds: 0.5, is_chase: false, chase_label: null },
    buyback: {
      amount: Math.round(value * 90) / 100,
      rate: 0.9,
      valid_until: validUntil,
      after: { amount: Math.round(value * 80) / 100, rate: 0.8, valid_until: '2026-01-08T12:00:00.000Z' },
    },
  };
}

export function sealedPull(id: string, value: number) {
  return {
    pull_id: `pull-${id}`,
    kind: 'sealed_pack' as const,
    item: { id: `sealed-${id}`, name: `Sealed ${id}` },
    value,
    hit: { rarity_tier: 'consolation', bucket: 'c', bucket_odds: 0.1, is_chase: false, chase_label: null },
    buyback: null,
  };
}

export function packResponse(
  checkoutId: string,
  pulls: PackPurchaseResponse['pulls'],
  totalCharged: number,
  remaining: number,
): PackPurchaseResponse {
  return {
    checkout_id: checkoutId,
    pack_type: 'starter',
    quantity: pulls.length,
    total_charged: totalCharged,
    remaining_balance: remaining,
    summary: { total_value: 0, buyback_now_total: 0, best_pull: null },
    pulls,
  };
}

/**
 * An order booked as the executor books one: its intent recorded (account `main`, a pack order
 * unless `intent` says otherwise), marked sent, then confirmed with `response`.
 */
export function bookOrder(
  ledger: Ledger,
  key: string,
  response: Parameters<Ledger['confirmIntent']>[1],
  intent: Partial<NewIntent> = {},
) {
  ledger.recordIntent({ key, account: 'main', operation: 'pack', body: { pack_type: 'starter' }, ...intent });
  ledger.markIntentSent(key);
  return ledger.confirmIntent(key, response);
}
