#!/usr/bin/env node
// The CLI is compiled by `npm run build` (run by `npm ci` through `prepare`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

// `packbot run` lives for months and is idle ~97% of the time: V8 is set for memory, not speed,
// before anything else is loaded (docs/runner.md, "Footprint", has each flag's figure):
// - the heap grows less between full collections (no 120-150 MiB sawtooth);
// - a function is compiled to machine code only after ~30 times more bytecode has run in it than
//   V8's default budget, and never by the baseline compiler: the rare hot paths are optimized,
//   the rest is interpreted (most code runs a few times a minute);
// - undici's HTTP parser (WebAssembly) keeps its baseline compilation.
// The batch commands (backtest, optimize) keep V8's defaults: the first flag alone costs a
// dynamic backtest path 15-25%.
const RUN_V8_FLAGS = [
  '--optimize-for-size',
  '--interrupt-budget=2000000',
  '--no-sparkplug',
  '--liftoff-only',
];
if (process.argv[2] === 'run') for (const flag of RUN_V8_FLAGS) setFlagsFromString(flag);

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('packbot: not built yet; run `npm ci` (or `npm run build`) first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
