/**
 * `npm run bench`: runs every `bench/*.bench.js` (compiled) module's default Benchmark and prints
 * one table. Pass names to run a subset: `npm run bench -- market`.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Benchmark, BenchResult } from './lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const rows: BenchResult[] = [];
for (const f of files) {
  const mod = (await import(pathToFileURL(join(here, f)).href)) as { default: Benchmark };
  process.stderr.write(`running ${mod.default.name}...\n`);
  rows.push(...(await mod.default.run()));
}
const w = Math.max(10, ...rows.map((r) => r.name.length));
console.log(`${'benchmark'.padEnd(w)}  ${'value'.padEnd(24)}  ${'ratio'.padEnd(8)}  goal`);
for (const r of rows) {
  const ratio = r.ratio === undefined ? '' : r.ratio.toFixed(3);
  const mark = r.ok === undefined ? '' : r.ok ? '  ok' : '  BELOW GOAL';
  console.log(`${r.name.padEnd(w)}  ${r.value.padEnd(24)}  ${ratio.padEnd(8)}  ${r.goal ?? ''}${mark}`);
}
