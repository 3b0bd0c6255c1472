/**
 * The bot's code stays clear of ICU: `toLocaleString`, `localeCompare` and `Intl` load ICU's
 * number-format or collation data, ~9 MiB of a long-running bot's resident set (docs/runner.md,
 * "Footprint"). src/core/money.ts (`groupThousands`) and src/core/compare-text.ts (`compareText`)
 * do the same without it. The backtest's HTML report and the browser's dashboard may use them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const allowed = new Set(['core/compare-text.ts', 'backtest/report-html.ts', 'obs/dashboard/dashboard.js']);
const icu = /\.toLocale\w*String\(|\.localeCompare\(|\bIntl\./;

it('no source file outside the allowed ones calls ICU', () => {
  const found: string[] = [];
  for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!/\.(ts|js)$/.test(f) || allowed.has(f)) continue;
    readFileSync(join(src, f), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (icu.test(line) && !/^\s*(\/\/|\*)/.test(line)) found.push(`src/${f}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(found, 'use groupThousands (src/core/money.ts) or compareText (src/core/compare-text.ts)').toEqual(
    [],
  );
});
