/** Valid response bodies for every operation, as the spec describes them. */
export const BASE = 'http://partner.test';
export const PREFIX = '/api/partner/v1';
export const KEY = 'sk_live_SECRET_do_not_leak_42';
export const T0 = '2026-01-01T00:00:00.000Z';

export const card = (id = 'card-1', extra: Record<string, unknown> = {}) => ({
  id,
  category: 'pokemon',
  name: `Card ${id}`,
  set: 'Base',
  grading_company: 'PSA',
  grading_rank: 10,
  cert_number: '123',
  market_value: 12.5,
  front_image: 'https://img/f',
  back_image: 'https://img/b',
  render_image: 'https://img/r',
  image_url: 'https://img/i',
  ...extra,
});

export const shopCard = (id: string) => card(id, { slab_label: 'PSA 10', price: 14, sale_status: 'shop' });

export const packPurchase = {
  checkout_id: 'co-1',
  pack_type: 'gold',
  quantity: 1,
  total_charged: 25,
  remaining_balance: 975,
  summary: {
    total_value: 30,
    buyback_now_total: 27,
    best_pull: { pull_id: 'p-1', name: 'Card c1', value: 30 },
  },
  pulls: [
    {
      pull_id: 'p-1',
      kind: 'card',
      item: card('c1'),
      value: 30,
      hit: { rarity_tier: 'rare', bucket: 'b1', bucket_odds: 0.2, is_chase: false, chase_label: null },
      buyback: {
        amount: 27,
        rate: 0.9,
        valid_until: '2026-01-01T00:05:00.000Z',
        after: { amount: 24, rate: 0.8, valid_until: '2026-01-08T00:00:00.000Z' },
      },
    },
  ],
};

export const cardPurchase = {
  checkout_id: 'co-2',
  transaction_id: 'tx-2',
  card_id: 'card-1',
  source: 'shop',
  listing_id: null,
  price: 14,
  fee: 1,
  total_charged: 15,
  remaining_balance: 960,
  item: card('card-1'),
};

export const sellBack = {
  total_paid: 27,
  remaining_balance: 1002,
  results: [
    {
      card_id: 'c1',
      pull_id: 'p-1',
      status: 'sold',
      transaction_id: 'tx-3',
      payout_amount: 27,
      payout_rate: 0.9,
    },
  ],
};

export const listing = { listing_id: 'l-1', card_id: 'c1', price: 20 };
export const delist = { card_id: 'c1', delisted: true };

export const packList = {
  category: 'pokemon',
  packs: [
    {
      pack_type: 'gold',
      name: 'Gold',
      price: 25,
      available: true,
      max_quantity: 10,
      risk_levels: ['chill', 'standard'],
    },
    {
      pack_type: 'ruby',
      name: 'Ruby',
      price: 50,
      available: false,
      reason: 'out of stock',
      max_quantity: 5,
      risk_levels: ['aggressive'],
    },
  ],
};

export const packPool = {
  pack_type: 'gold',
  name: 'Gold',
  category: 'pokemon',
  risk_level: 'standard',
  price: 25,
  available: true,
  expected_value: 22.5,
  bands: [
    {
      bucket_id: 'b1',
      label: '$10-$50',
      min_value: 10,
      max_value: 50,
      odds: 0.9,
      is_consolation: false,
      hittable_cards: 1,
    },
    {
      bucket_id: 'b0',
      label: 'Sealed',
      min_value: 1,
      max_value: 5,
      odds: 0.1,
      is_consolation: true,
      hittable_cards: 0,
    },
  ],
  chase: {
    card: card('chase'),
    probability: 0.001,
    odds_label: '1 in 1000',
    label: 'Chase',
    ends_at: null,
  },
  total_cards: 1,
  cards: [{ ...card('c1'), bucket_id: 'b1' }],
};

export const shopPage = (page: number, perPage: number, total: number, ids: string[]) => ({
  category: 'pokemon',
  page,
  per_page: perPage,
  total,
  cards: ids.map(shopCard),
});

const vaultEntry = (id: string) => ({
  card_id: id,
  pull_id: `p-${id}`,
  pulled_at: T0,
  item: card(id),
  value: 12.5,
  listed: false,
  buyback: { amount: 10, rate: 0.8, basis_value: 12.5, locked_value_until: '2026-01-08T00:00:00.000Z' },
});

export const vaultPage = (page: number, perPage: number, total: number, ids: string[]) => ({
  category: 'pokemon',
  page,
  per_page: perPage,
  total,
  cards: ids.map(vaultEntry),
});

export const account = {
  username: 'alice',
  balance: 1000,
  limits: {
    packs_today: 3,
    max_packs_per_day: 100,
    packs_left_today: 97,
    resets_at: '2026-01-02T00:00:00.000Z',
    min_seconds_between_purchases: 60,
    next_purchase_at: T0,
  },
};

export const identity = {
  key: { name: 'bot', scopes: ['read:catalog', 'read:account'] },
  linked: true,
  account: { id: 'u-1', username: 'alice', profile_url: 'https://x/alice' },
};

export const reportRow = (i: number) => ({
  user_id: `u-${i}`,
  created_at: T0,
  amount: 25,
  source: 'pokemon',
  pack_type: 'gold',
});

export const reportPage = (page: number, perPage: number, total: number, rows: number[]) => ({
  since: '2025-12-01T00:00:00.000Z',
  until: '2025-12-31T00:00:00.000Z',
  page,
  per_page: perPage,
  total,
  pulls: rows.map(reportRow),
});
