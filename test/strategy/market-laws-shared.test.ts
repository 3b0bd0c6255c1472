/**
 * The simulator, the backtest's fast world and the scorer's listing life take the market's laws
 * from one module (src/strategy/market-laws.ts) and do not restate them: each imports it, and the
 * laws' literal coefficients and formulas appear nowhere else in them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');
const read = (f: string) => readFileSync(join(SRC, f), 'utf8');

/** The files that implement the market's per-event laws, on both sides. */
const USERS = [
  'market/dynamics.ts',
  'market/inventory.ts',
  'market/buyback.ts',
  'market/market.ts',
  'backtest/dynamic-market.ts',
  'backtest/shop.ts',
  'strategy/listing-life.ts',
  'strategy/listing-model.ts',
];

/** Restatements of a law (formula or coefficient) that belong in market-laws.ts only. */
const RESTATED: [string, RegExp][] = [
  ["other users' 0.6 standard share", /[^.\d]0\.6\b/],
  ["other users' 0.4 shared part", /[^.\d]0\.4\b/],
  ['an exponential relaxation or per-tick probability', /Math\.exp\(\s*-/],
  ['the log-normal drift correction', /\*\s*\w+\)\s*\/\s*2/],
  ['the fill hazard', /sensitivity\s*\*\s*\(/],
  ['the value lock as a constant', /VALUE_LOCK_MS|lock_days\s*\*/],
  ['the fresh window as a constant', /FRESH_WINDOW_MS|fresh_window_seconds\s*\*/],
];

describe('one set of market laws', () => {
  it.each(USERS)('%s imports src/strategy/market-laws.ts', (f) => {
    expect(read(f)).toMatch(/from '(\.\/|\.\.\/strategy\/)market-laws\.js'/);
  });

  it.each(USERS)('%s restates no law', (f) => {
    const text = read(f);
    for (const [what, re] of RESTATED) expect(re.test(text), `${f}: ${what}`).toBe(false);
  });

  it('the laws module is pure: no IO and nothing from the bot, backtest or cli', () => {
    const imports = [...read('strategy/market-laws.ts').matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
    for (const i of imports) expect(i).toMatch(/^\.\.\/core\/(clock|money|prng)\.js$|^\.\.\/api\/rules\.js$/);
  });
});
