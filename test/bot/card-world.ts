/**
 * A world for card buying: the pokemon shop sells at 0.6 × market value (under it), the onepiece
 * shop at 1.3 × (over it); one cheap pack no card strategy opens; no other users, no value drift.
 */
import { devKeys, parseWorld } from '../../src/market/world.js';
import type { WorldInput } from '../../src/market/world-schema.js';

export const PACK = {
  pack_type: 'lucky',
  name: 'Lucky Pack',
  price: 10,
  max_quantity: 10,
  risk_levels: ['standard'],
  bands: [
    {
      bucket_id: 'low',
      min_value: 5,
      max_value: 9,
      odds: { standard: 1 },
      generate: { count: 100, distribution: 'uniform' },
    },
  ],
};

export function shopWorld(over: Partial<WorldInput> = {}, shops: Record<string, object> = {}) {
  return parseWorld({
    format: 'packbot.world/v1',
    name: 'card buying world',
    accounts: [{ id: 'acct_t', username: 'tester', balance: 5000 }],
    keys: devKeys('acct_t'),
    categories: {
      pokemon: {
        packs: [PACK],
        shop: {
          markup: 0.6,
          min_value: 20,
          max_value: 150,
          generate: { count: 40, distribution: 'uniform' },
        },
      },
      onepiece: {
        shop: {
          markup: 1.3,
          min_value: 20,
          max_value: 150,
          generate: { count: 40, distribution: 'uniform' },
        },
      },
      ...shops,
    },
    dynamics: {
      others_pack_openings_per_hour: 0,
      others_shop_purchases_per_hour: 0,
      value_daily_volatility: 0,
    },
    ...over,
  } as WorldInput);
}
