/**
 * `npm run soak -- [--days N] [--speed S] [--keep DIR]`: the bot on the embedded simulator through
 * N simulated days at S× (soak.ts). Prints a line per simulated day, the start/middle/end table and
 * the verdict; exit 0 when memory and handles are flat, 1 otherwise, 2 on a bad flag.
 */
import { pathToFileURL } from 'node:url';
import { intFlag, parseFlags } from '../src/cli/args.js';
import { UserInputError } from '../src/core/errors.js';
import { runSoak, soakTable } from './soak.js';

export const USAGE = `npm run soak -- [--days N] [--speed S] [--keep DIR]

  --days N    simulated days (default 30, 1..365)
  --speed S   simulated ms per wall ms (default 5000, 10..10000): 30 days take 30*86400/S s
  --keep DIR  keep the run's config, ledger and simulator state in DIR`;

export async function main(argv: string[]): Promise<number> {
  let days: number;
  let speed: number;
  let keep: string | undefined;
  try {
    const { values, positionals } = parseFlags(
      argv,
      {
        days: { type: 'string' },
        speed: { type: 'string' },
        keep: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      'soak',
    );
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (positionals.length > 0) throw new UserInputError(`soak: unexpected argument '${positionals[0]}'`);
    days = intFlag(values.days, 'days', 30, { min: 1, max: 365 });
    speed = intFlag(values.speed, 'speed', 5000, { min: 10, max: 10_000 });
    keep = values.keep;
  } catch (e) {
    if (e instanceof UserInputError) {
      process.stderr.write(`${e.message}\n\nusage: ${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `soak: ${days} simulated days at ${speed}x (about ${Math.ceil((days * 86_400) / speed)} s of wall time), node ${process.version}`,
  );
  const r = await runSoak({ days, speed, ...(keep ? { dir: keep } : {}), progress: out });
  if (!r.gcExposed)
    out('note: run node with --expose-gc (npm run soak does) for heap figures after a full GC');
  out('');
  out(soakTable(r));
  out('');
  out(`log lines: ${r.logLines.total} (${r.logLines.warn} warn, ${r.logLines.error} error)`);
  out(`handles at the end: ${JSON.stringify(r.end.handleTypes)}`);
  out(`handles before the start and after the stop: ${r.handlesBefore} → ${r.handlesAfterStop}`);
  out(r.simGrowth);
  out(r.verdict.line);
  return r.verdict.memoryFlat && r.verdict.handlesFlat ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`soak: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
