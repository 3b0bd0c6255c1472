/**
 * Static-path cases where each of the budget's and the service's rules binds in turn (the day's
 * packs, the rate limit, the cool-down, the daily and total caps, the balance reserve and ruin,
 * the stop-loss, Kelly sizing, listings), shared by the tests that compare two ways of running
 * the same path, and `plain`, a path result as comparable text.
 */
import type { PathResult } from '../../src/backtest/path/path-io.js';
import { chaseOnTop, singleBand } from '../fixtures/pools.js';
import { strategy } from '../strategy-builder.js';
import { account, snapshot } from './helpers.js';

const pools = [chaseOnTop, { ...singleBand, price: 2.6 }];
const losing = [{ ...singleBand, price: 4 }];

export interface BindingCase {
  name: string;
  strategy: ReturnType<typeof strategy>;
  balance?: number;
  pools?: typeof pools;
}

export const bindingCases: BindingCase[] = [
  { name: 'fixed, generous budget', strategy: strategy({}, { base: 'backtest' }) },
  { name: 'listing pulls', strategy: strategy({ sell: { threshold_usd: 20 } }, { base: 'backtest' }) },
  {
    name: 'daily cap binds the quantity',
    strategy: strategy(
      { budget: { max_daily_spend_usd: 100 }, sell: { threshold_usd: 20 } },
      { base: 'backtest' },
    ),
  },
  { name: 'total cap', strategy: strategy({ budget: { max_total_spend_usd: 700 } }, { base: 'backtest' }) },
  {
    name: 'balance reserve and ruin',
    strategy: strategy(
      { budget: { min_balance_usd: 400 }, sell: { threshold_usd: 30 } },
      { base: 'backtest' },
    ),
    balance: 700,
  },
  {
    name: 'a losing pack: reserve and ruin',
    strategy: strategy({ budget: { min_balance_usd: 100 } }, { base: 'backtest' }),
    balance: 300,
    pools: losing,
  },
  {
    name: 'a losing pack: stop-loss',
    strategy: strategy({ budget: { stop_loss_usd: 40 } }, { base: 'backtest' }),
    balance: 1000,
    pools: losing,
  },
  {
    name: 'stop-loss',
    strategy: strategy({ budget: { stop_loss_usd: 150 }, sell: { threshold_usd: 25 } }, { base: 'backtest' }),
    balance: 2000,
  },
  {
    name: 'cool-down and small quantity',
    strategy: strategy(
      { open: { cooldown_seconds: 150, max_quantity: 3 }, sell: { threshold_usd: 20 } },
      { base: 'backtest' },
    ),
  },
  {
    name: 'Kelly sizing',
    strategy: strategy(
      { open: { sizing: 'kelly', kelly_fraction: 1 }, sell: { threshold_usd: 20 } },
      { base: 'backtest' },
    ),
    balance: 3000,
  },
];

/** The snapshot a case runs on: its pools, 60 packs a day, its balance. */
export function caseSnapshot(c: BindingCase) {
  return snapshot(
    c.pools ?? pools,
    account({ max_packs_per_day: 60, packs_left_today: 60 }, c.balance ?? 100_000),
  );
}

export function plain(r: PathResult): string {
  return JSON.stringify(r, (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v));
}
