/**
 * The market's laws live in one module (src/strategy/market-laws.ts): no file of src restates one
 * — neither declares a law's name again nor writes its formula or coefficient — and the world's
 * event loops (the simulator, the backtest's fast world, the scorer's listing life) take them from
 * it. Every file of src is scanned, so a new file cannot slip past the guard.
 */
import { describe, expect, it } from 'vitest';
import { readSrc as read, srcFiles } from '../src-files.js';

const LAWS = 'strategy/market-laws.ts';
const FILES = srcFiles().filter((f) => f !== LAWS);

/** The code of a file without its comments (a law may be described anywhere, not written). */
const code = (f: string) =>
  read(f)
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/[^\n]*/g, '');

/** The files that run the world's events: they take every law from the module. */
const USERS = [
  'market/dynamics.ts',
  'market/inventory.ts',
  'market/buyback.ts',
  'market/orders.ts',
  'backtest/world/dynamic-market.ts',
  'backtest/world/world-pools.ts',
  'backtest/world/value-drift.ts',
  'backtest/world/rescoring.ts',
  'backtest/world/listing-resolution.ts',
  'backtest/world/shop.ts',
  'strategy/listing-life.ts',
  'strategy/listing-model.ts',
];

/**
 * Restatements of a law (formula or coefficient) that belong in market-laws.ts only, each with a
 * restatement it was written to catch (`caught`), and the files where the same text is something
 * else (`home`): the spec's numbers themselves, the world file's defaults made of them, the random
 * generator's own distributions.
 */
const RESTATED: { what: string; re: RegExp; caught: string[]; home?: string[] }[] = [
  { what: "other users' 0.6 standard share", re: /[^.\d]0\.6\b/, caught: ['if (u < 0.6) return standard;'] },
  { what: "other users' 0.4 shared part", re: /[^.\d]0\.4\b/, caught: ['const any = 0.4 / levels;'] },
  {
    what: 'an exponential relaxation or per-tick probability',
    re: /Math\.exp\(\s*-/,
    caught: ['const share = 1 - Math.exp(-rate * dtHours);'],
    home: ['core/prng.ts'],
  },
  {
    what: 'the log-normal drift correction',
    re: /\*\s*\w+\)\s*\/\s*2/,
    caught: ['const drift = (trend - (sigma * sigma) / 2) * dt;'],
  },
  {
    what: 'the fill hazard',
    re: /sensitivity\s*\*\s*\(/,
    caught: ['base * Math.exp(-sensitivity * (price / value - 1))'],
  },
  {
    what: 'the value lock as a constant',
    re: /VALUE_LOCK_MS|lock_days\s*\*/,
    caught: ['const lockEnd = pull.pulledAt + VALUE_LOCK_MS;'],
    home: ['api/rules.ts'],
  },
  {
    what: 'the fresh window as a constant',
    re: /FRESH_WINDOW_MS|fresh_window_seconds\s*\*/,
    caught: ['valid_until: iso(now + FRESH_WINDOW_MS),'],
    home: ['api/rules.ts', 'market/world-schema.ts'],
  },
  {
    what: 'a weighted choice walked by hand (pickWeighted)',
    re: /if \((\w+) < (\w+)\) (?:return|break)\b[^\n]*\n\s*\1 -= \2\b/,
    caught: [
      '  for (const c of CATEGORIES) {\n    const w = weight(c);\n    if (x < w) return c;\n    x -= w;\n  }',
    ],
  },
  {
    what: "the pool EV's bands after the chase (pullEv)",
    re: /\?\s*1\s*-\s*\w+\s*:\s*0\s*\)\s*\*|\(\s*1\s*-\s*\w+\s*\)\s*\*\s*\w+\s*\)\s*\/\s*\w+/,
    caught: [
      'return p * chaseValue + (t > 0 ? 1 - p : 0) * bandsEv;',
      'total += (chase ? pc * chaseCents : 0) + (w > 0 ? ((1 - pc) * acc) / w : 0);',
    ],
  },
];

/**
 * Declarations that share a law's name and are something else: the strategy's fill model over a
 * horizon (`fillProbability` of listing-model.ts), which calls the law for its hazard model.
 */
const SAME_NAME: Record<string, string[]> = { fillProbability: ['strategy/listing-model.ts'] };

/** The names the laws module exports (functions and constants). */
const LAW_NAMES = [...read(LAWS).matchAll(/^export (?:function|const) (\w+)/gm)].map((m) => m[1]!);

describe('one set of market laws', () => {
  it('scans every file of src', () => {
    expect(FILES.length).toBeGreaterThan(150);
    for (const f of [...USERS, 'bot/runner.ts', 'cli/main.ts', 'store/ledger.ts']) expect(FILES).toContain(f);
    // Each pattern catches the restatement it was written for.
    for (const { what, re, caught } of RESTATED) for (const c of caught) expect(re.test(c), what).toBe(true);
    expect(LAW_NAMES).toEqual(
      expect.arrayContaining(['pickWeighted', 'pullEv', 'sellBackAmount', 'pickByStock']),
    );
  });

  it.each(FILES)('%s restates no law', (f) => {
    const text = code(f);
    for (const { what, re, home } of RESTATED)
      if (!home?.includes(f)) expect(re.test(text), `${f}: ${what}`).toBe(false);
    for (const name of LAW_NAMES)
      if (!SAME_NAME[name]?.includes(f))
        expect(new RegExp(`(function|const|let)\\s+${name}\\b`).test(text), `${f} declares ${name}`).toBe(
          false,
        );
  });

  it.each(USERS)('%s imports src/strategy/market-laws.ts', (f) => {
    expect(read(f)).toMatch(/from '(\.\/|(\.\.\/)+strategy\/)market-laws\.js'/);
  });

  it('the laws module is pure: no IO and nothing from the bot, backtest or cli', () => {
    const imports = [...read(LAWS).matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
    for (const i of imports) expect(i).toMatch(/^\.\.\/core\/(clock|money|prng)\.js$|^\.\.\/api\/rules\.js$/);
  });
});
