/**
 * The files of one chaos run: a world where orders flow fast in wall time (no pause between
 * purchases, a daily pack limit that never binds), a strategy that opens its packs readily,
 * sells the low band back and lists the high band, with spend caps the audit checks, and the bot
 * config pointing at the fault proxy. A run with the `cards` family also has a shop selling far
 * below value, and the strategy buys from it (card caps that never bind; the spend caps do).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { SCOPES } from '../src/api/schemas.js';
import type { Rules, WorldInput } from '../src/market/world-schema.js';

export const ACCOUNT = 'acct_chaos';
export const KEY = 'sk_sim_full';
export const KEY_ENV = 'PACKBOT_CHAOS_KEY';
export const PACK = 'lucky';
const PACK_PRICE_CENTS = 1000;
/** Packs per order: with caps that are not a multiple of an order, a lying price shows as overspend. */
const ORDER_QUANTITY = 3;
/** The shop of a run with cards: every card at this fraction of its value (value 30-120 USD). */
const SHOP_MARKUP = 0.6;
const SHOP_CARDS = 3000;
/** The world's `fresh_window_seconds` (the default): how long a pull sells back at 0.9. */
export const FRESH_WINDOW_MS = 300_000;

export interface Caps {
  dailyCents: number;
  totalCents: number;
}

/** Caps that do not bind: the first half of a run trades freely. */
export const OPEN_CAPS: Caps = { dailyCents: 10_000_000, totalCents: 10_000_000 };

/**
 * Caps that bind soon after `spentCents`: a few more full orders (and, with cards, some cards), then
 * part of one, so a bot that sizes its last order by a lying price overspends.
 */
export function capsAfter(spentCents: number, cards = false): Caps {
  const cents =
    spentCents + 5 * ORDER_QUANTITY * PACK_PRICE_CENTS + 2 * PACK_PRICE_CENTS + (cards ? CARD_ROOM_CENTS : 0);
  return { dailyCents: cents, totalCents: cents };
}

/** A run with cards: room for about twenty more cards (18-72 USD each) once the caps bind. */
const CARD_ROOM_CENTS = 1000_00;

export interface RunFiles {
  strategy: string;
  config: string;
  ledger: string;
  pauseFile: string;
}

/** 80% of pulls worth 5-9 USD (sold back), 20% worth 30-60 USD (listed); `low`/`high` cards each. */
function bands(low: number, high: number) {
  return [
    {
      bucket_id: 'low',
      min_value: 5,
      max_value: 9,
      odds: { standard: 0.8 },
      generate: { count: low, distribution: 'uniform' as const },
    },
    {
      bucket_id: 'high',
      min_value: 30,
      max_value: 60,
      odds: { standard: 0.2 },
      generate: { count: high, distribution: 'uniform' as const },
    },
  ];
}

/** Under-priced shop stock (a run with cards): the bot buys a card as soon as it has synced. */
const SHOP = {
  markup: SHOP_MARKUP,
  min_value: 30,
  max_value: 120,
  generate: { count: SHOP_CARDS, distribution: 'uniform' as const },
};

/**
 * The chaos world. `server` is another world's rules (worlds.ts): every choice the spec leaves
 * open is taken from it, while the limits below stay the suite's (orders must flow fast).
 */
export function chaosWorld(withShop = false, server: Partial<Rules> = {}): WorldInput {
  return {
    format: 'packbot.world/v1',
    name: 'chaos world',
    accounts: [{ id: ACCOUNT, username: 'chaos', balance: 1_000_000 }],
    keys: [{ name: 'chaos-full', key: KEY, scopes: [...SCOPES], account: ACCOUNT }],
    categories: {
      pokemon: {
        packs: [
          {
            pack_type: PACK,
            name: 'Lucky Pack',
            price: PACK_PRICE_CENTS / 100,
            max_quantity: 10,
            risk_levels: ['standard'],
            bands: bands(12_000, 4000),
          },
          // An honest second pack: while the proxy lies about the first one's price, the bot
          // refuses that pool and keeps trading this one.
          {
            pack_type: 'steady',
            name: 'Steady Pack',
            price: 12,
            max_quantity: 10,
            risk_levels: ['standard'],
            bands: bands(6000, 2000),
          },
        ],
        ...(withShop ? { shop: SHOP } : {}),
      },
    },
    dynamics: {
      others_pack_openings_per_hour: 0,
      others_shop_purchases_per_hour: 0,
      value_daily_volatility: 0,
    },
    rules: {
      ...server,
      min_seconds_between_purchases: 0,
      max_packs_per_day: 1_000_000,
      // The service's own card caps never bind: the strategy's spend caps are what is audited.
      ...(withShop ? { card_daily_count_cap: 1_000_000, card_daily_spend_cap: 10_000_000 } : {}),
    },
  };
}

/** Card buying with caps of its own that never bind, so the budget's spend caps decide. */
const CARDS = {
  enabled: true,
  categories: ['pokemon'],
  min_edge_ratio: 1.1,
  max_price_usd: 500,
  max_per_day: 1_000_000,
  max_daily_spend_usd: 10_000_000,
  exit: 'list',
};

function strategy(caps: Caps, cards: boolean): unknown {
  return {
    format: 'packbot.strategy/v1',
    name: 'chaos',
    packs: { categories: ['pokemon'], risk_levels: ['standard'] },
    open: { min_ev_ratio: 1, max_quantity: ORDER_QUANTITY, sizing: 'fixed' },
    budget: {
      max_daily_spend_usd: caps.dailyCents / 100,
      max_total_spend_usd: caps.totalCents / 100,
      min_balance_usd: 0,
      stop_loss_usd: 1_000_000,
    },
    sell: { threshold_usd: 25, list: { markup: 1.2, seller_fee_rate: 0.05, only_when_better: false } },
    ...(cards ? { cards: CARDS } : {}),
  };
}

/**
 * The bot's API timeout. With the `latency` family, a short one, so injected latency (up to 2.5 s)
 * becomes timeouts (in-doubt orders), not just slowness; a server that takes `answerMs` to answer
 * an order (`rules.pack_purchase_answer_ms`) gets that much more, so the injected latency, not the
 * server's own pace, is what times out. Without it, a patient one: the pools are
 * megabytes of JSON, which a busy machine may not serve and read within 2 s, and a read that
 * always times out would keep the bot from trading at all.
 */
export const apiTimeoutSeconds = (latency: boolean, answerMs = 0): number =>
  latency ? 2 + Math.ceil(answerMs / 1000) : 30;

function config(baseUrl: string, files: Omit<RunFiles, 'config'>, timeoutSeconds: number): unknown {
  return {
    format: 'packbot.config/v1',
    mode: 'live',
    api: { base_url: baseUrl, key_env: KEY_ENV, timeout_seconds: timeoutSeconds },
    // Injected latency is at most 2.5 s: an order cannot still be running 10 s after its send.
    orders: { settle_seconds: 10 },
    accounts: [{ name: 'main', strategy: files.strategy }],
    store: { path: files.ledger },
    metrics: { port: 0 },
    log: { level: 'info', pretty: 'never' },
    polling: { account_seconds: 5, pools_seconds: 60, vault_seconds: 60, listings_seconds: 30 },
    sellback: { safety_margin_seconds: 60, batch_size: 10 },
    control: { kill_switch_file: files.pauseFile },
  };
}

/** Writes the world file (the simulator starts before the proxy and the config exist). */
export function writeWorld(dir: string, withShop = false, server: Partial<Rules> = {}): string {
  const path = join(dir, 'world.yaml');
  writeFileSync(path, stringify(chaosWorld(withShop, server)));
  return path;
}

/** (Re)writes the strategy: the bot reads it at each start. */
export function writeStrategy(path: string, caps: Caps, cards = false): void {
  writeFileSync(path, stringify(strategy(caps, cards)));
}

/** Writes strategy and config into `dir`; the config points the bot at `baseUrl`. */
export function writeBotFiles(
  dir: string,
  baseUrl: string,
  caps: Caps,
  cards = false,
  timeoutSeconds = apiTimeoutSeconds(true),
): RunFiles {
  const files = {
    strategy: join(dir, 'strategy.yaml'),
    ledger: join(dir, 'ledger.db'),
    pauseFile: join(dir, 'pause'),
  };
  writeStrategy(files.strategy, caps, cards);
  const path = join(dir, 'bot.yaml');
  writeFileSync(path, stringify(config(baseUrl, files, timeoutSeconds)));
  return { ...files, config: path };
}
