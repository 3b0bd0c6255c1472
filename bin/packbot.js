#!/usr/bin/env node
// The CLI is compiled by `npm run build` (run by `npm ci` through `prepare`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

// `packbot run` lives for months: its heap is sized for memory, not speed (a steady ~100 MiB
// instead of a 120-150 MiB sawtooth, for ~10% more CPU while trading; docs/runner.md). Set before
// anything else is loaded. The batch commands (backtest, optimize) keep V8's defaults: ~20% faster.
if (process.argv[2] === 'run') setFlagsFromString('--optimize-for-size');

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('packbot: not built yet; run `npm ci` (or `npm run build`) first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
