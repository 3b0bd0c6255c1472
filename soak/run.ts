/**
 * `npm run soak -- [--days N] [--speed S] [--keep DIR]`: the bot against `packbot sim --speed S`
 * (its own process) through N simulated days (soak.ts). Prints a line per simulated day, the
 * start/middle/end table and the verdict; exit 0 when memory is shown flat and handles are flat,
 * 1 when memory grows beyond the limit or the run is too short to tell, 2 on a bad flag.
 */
import { pathToFileURL } from 'node:url';
import { intFlag, parseFlags } from '../src/cli/args.js';
import { UserInputError } from '../src/core/errors.js';
import { runSoak, soakTable } from './soak.js';

export const USAGE = `npm run soak -- [--days N] [--speed S] [--keep DIR] [--plant-leak MB]

  --days N    simulated days (default 30, 1..365)
  --speed S   simulated ms per wall ms (default 5000, 10..10000): 30 days take 30*86400/S s
  --keep DIR  keep the run's config, ledger, the bot's log (bot.log) and the samples in DIR
  --plant-leak MB  keep MB a simulated day for good in the bot's process: the verdict must fail`;

export async function main(argv: string[]): Promise<number> {
  let days: number;
  let speed: number;
  let keep: string | undefined;
  let leak: number | undefined;
  try {
    const { values, positionals } = parseFlags(
      argv,
      {
        days: { type: 'string' },
        speed: { type: 'string' },
        keep: { type: 'string' },
        'plant-leak': { type: 'string' },
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
    leak =
      values['plant-leak'] === undefined
        ? undefined
        : intFlag(values['plant-leak'], 'plant-leak', 0, { min: 1, max: 1000 });
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
  if (leak)
    out(`a leak of ${leak} MB a simulated day is planted in the bot's process: the verdict must fail`);
  const r = await runSoak({
    days,
    speed,
    ...(keep ? { dir: keep } : {}),
    ...(leak ? { leakMbPerDay: leak } : {}),
    progress: out,
  });
  if (!r.gcExposed) out('note: no full GC could be called: heap figures include garbage');
  out('');
  out(soakTable(r));
  out('');
  out(`log lines: ${r.logLines.total} (${r.logLines.warn} warn, ${r.logLines.error} error)`);
  out(`handles at the end: ${JSON.stringify(r.end.handleTypes)}`);
  out(`handles before the start and after the stop: ${r.handlesBefore} → ${r.handlesAfterStop}`);
  out(r.simGrowth);
  out(r.verdict.line);
  return r.verdict.ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // Interrupted: exit through 'exit' handlers, which stop the simulator's process.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      process.stderr.write(`soak: ${signal}: stopping\n`);
      process.exit(130);
    });
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
