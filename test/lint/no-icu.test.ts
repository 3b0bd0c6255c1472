/**
 * The bot's code stays clear of ICU: `toLocaleString`, `localeCompare` and `Intl` load ICU's
 * number-format or collation data, ~9 MiB of a long-running bot's resident set (docs/runner.md,
 * "Footprint"). src/core/money.ts (`groupThousands`) and src/core/compare-text.ts (`compareText`)
 * do the same without it. The backtest's HTML report and the browser's dashboard may use them.
 */
import { expect, it } from 'vitest';
import { readSrc, srcFiles } from '../src-files.js';

const allowed = new Set([
  'core/compare-text.ts',
  'backtest/report/report-html.ts',
  'obs/dashboard/dashboard.js',
]);
const icu = /\.toLocale\w*String\(|\.localeCompare\(|\bIntl\./;

it('no source file outside the allowed ones calls ICU', () => {
  const found: string[] = [];
  for (const f of srcFiles(['.ts', '.js'])) {
    if (allowed.has(f)) continue;
    readSrc(f)
      .split('\n')
      .forEach((line, i) => {
        if (icu.test(line) && !/^\s*(\/\/|\*)/.test(line)) found.push(`src/${f}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(found, 'use groupThousands (src/core/money.ts) or compareText (src/core/compare-text.ts)').toEqual(
    [],
  );
});
