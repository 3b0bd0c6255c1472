/**
 * `npm run agreement -- [--strategies N] [--seed S] [--paths P] [--days D] [--live K] [--out DIR]`:
 * the agreement harness's CLI (docs/backtest.md, "Agreement harness"). Prints one row per
 * strategy × world as it is done, then a line per disagreement; exit 0 when every view agrees
 * within its error, 1 naming the strategies and views that do not, 2 on a bad flag.
 */
import { existsSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { intFlag, parseFlags } from '../src/cli/args.js';
import { UserInputError } from '../src/core/errors.js';
import { type AgreementOptions, DEFAULTS, runAgreement } from './harness.js';
import { failureLines, legend, tableHeader, tableRow } from './table.js';

export const USAGE = `npm run agreement -- [--strategies N] [--seed S] [--paths P] [--days D] [--live K] [--out DIR] [--no-hand-picked]

  --strategies N    random strategies to draw (default ${DEFAULTS.strategies}, 1..1000), beside the hand-picked one
  --seed S          seed of the draws and of every backtest (default ${DEFAULTS.seed})
  --paths P         paths of each static and dynamic backtest (default ${DEFAULTS.paths}, 2..100000)
  --days D          days of each backtest (default ${DEFAULTS.days}, 1..365)
  --live K          run the bot live for the first K random strategies on both worlds, ${DEFAULTS.liveRuns} simulator
                    seeds x ${DEFAULTS.liveDays} day each against a ${DEFAULTS.livePaths}-path dynamic backtest (default ${DEFAULTS.live})
  --out DIR         write the strategies (ID.yaml) and the snapshots (snapshot-WORLD.json) to DIR, so a
                    failing row reruns with packbot backtest
  --no-hand-picked  draw only (the hand-picked heavy-seller fails while the dynamic scorer lags its pools)`;

const MAX_SEED = 2 ** 32 - 1;

export function parseOptions(argv: string[]): AgreementOptions | 'help' {
  const { values, positionals } = parseFlags(
    argv,
    {
      strategies: { type: 'string' },
      seed: { type: 'string' },
      paths: { type: 'string' },
      days: { type: 'string' },
      live: { type: 'string' },
      out: { type: 'string' },
      'no-hand-picked': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    'agreement',
  );
  if (values.help) return 'help';
  if (positionals.length > 0) throw new UserInputError(`agreement: unexpected argument '${positionals[0]}'`);
  const strategies = intFlag(values.strategies, 'strategies', DEFAULTS.strategies, { min: 1, max: 1000 });
  if (values.out === '') throw new UserInputError('agreement: --out needs a directory');
  const out = values.out === undefined ? undefined : resolve(values.out);
  // Files of another run would sit beside this run's under the same names.
  if (out && existsSync(out) && readdirSync(out).length > 0)
    throw new UserInputError(`agreement: --out ${values.out}: the directory is not empty`);
  return {
    strategies,
    seed: intFlag(values.seed, 'seed', DEFAULTS.seed, { min: 0, max: MAX_SEED }),
    paths: intFlag(values.paths, 'paths', DEFAULTS.paths, { min: 2, max: 100_000 }),
    days: intFlag(values.days, 'days', DEFAULTS.days, { min: 1, max: 365 }),
    live: intFlag(values.live, 'live', DEFAULTS.live, { min: 0, max: strategies }),
    liveRuns: DEFAULTS.liveRuns,
    liveDays: DEFAULTS.liveDays,
    livePaths: DEFAULTS.livePaths,
    handPicked: values['no-hand-picked'] !== true,
    workers: availableParallelism(),
    ...(out ? { out } : {}),
  };
}

export async function main(argv: string[]): Promise<number> {
  let options: AgreementOptions | 'help';
  try {
    options = parseOptions(argv);
  } catch (e) {
    if (e instanceof UserInputError) {
      const message = e.message.startsWith('agreement:') ? e.message : `agreement: ${e.message}`;
      process.stderr.write(`${message}\n\nusage: ${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const o = options;
  const t0 = performance.now();
  let header = false;
  const result = await runAgreement({
    ...o,
    onRow: (row, zStar) => {
      if (!header) process.stdout.write(`${tableHeader(zStar)}\n`);
      header = true;
      process.stdout.write(`${tableRow(row, zStar)}\n`);
    },
  });
  process.stdout.write(`\n${legend(result)}\n`);
  const failures = failureLines(result, o.out, o);
  for (const l of failures) process.stdout.write(`${l}\n`);
  const failed = new Set(
    result.rows.filter((r) => r.errors.length > 0 || r.checks.some((c) => !c.pass)).map((r) => r.id),
  );
  const seconds = ((performance.now() - t0) / 1000).toFixed(0);
  process.stdout.write(
    `agreement: ${result.strategies.length} strategies x ${result.worlds.length} worlds, ${o.paths} paths x ${o.days} days, seed ${o.seed}, ${seconds} s: ` +
      (result.ok ? 'every view agrees\n' : `${failed.size} disagree: ${[...failed].join(', ')}\n`),
  );
  return result.ok ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`agreement: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
