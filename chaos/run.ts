/**
 * `npm run chaos -- [--kills N] [--seed S] [--scenario a,b] [--keep DIR]`: the chaos suite's CLI.
 * Prints one line per round, the problems and notes, then exactly one summary line; exit 0 only
 * when the audit is clean, 1 otherwise, 2 on a bad flag.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { intFlag, parseFlags } from '../src/cli/args.js';
import { UserInputError } from '../src/core/errors.js';
import { summaryLine } from './audit.js';
import { runChaos } from './harness.js';
import { isBuilt } from './processes.js';
import { parseScenarios, SCENARIO_HELP, SCENARIOS } from './scenarios.js';

export const USAGE = `npm run chaos -- [--kills N] [--seed S] [--scenario NAME[,NAME]] [--keep DIR]

  --kills N        SIGKILL rounds before the clean round (default 20, 0..1000)
  --seed S         seed of the fault plan, the simulator and the proxy (default 1)
  --scenario LIST  fault families, comma-separated (default: all)
  --keep DIR       keep the run's files (world, config, ledger) in DIR

Scenarios:
${SCENARIOS.map((s) => `  ${s.padEnd(12)} ${SCENARIO_HELP[s]}`).join('\n')}`;

export async function main(argv: string[]): Promise<number> {
  let options: Parameters<typeof runChaos>[0];
  try {
    const { values, positionals } = parseFlags(
      argv,
      {
        kills: { type: 'string' },
        seed: { type: 'string' },
        scenario: { type: 'string' },
        keep: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      'chaos',
    );
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (positionals.length > 0) throw new UserInputError(`chaos: unexpected argument '${positionals[0]}'`);
    let scenarios = [...SCENARIOS];
    if (values.scenario !== undefined) {
      try {
        scenarios = parseScenarios(values.scenario);
      } catch (e) {
        throw new UserInputError(`chaos: ${(e as Error).message}`);
      }
    }
    if (values.keep === '') throw new UserInputError('chaos: --keep needs a directory');
    const keep = values.keep === undefined ? undefined : resolve(values.keep);
    // A ledger left from another run would be audited against a fresh simulator.
    if (keep && existsSync(keep) && readdirSync(keep).length > 0)
      throw new UserInputError(`chaos: --keep ${values.keep}: the directory is not empty`);
    options = {
      kills: intFlag(values.kills, 'kills', 20, { min: 0, max: 1000 }),
      seed: intFlag(values.seed, 'seed', 1, { min: 0, max: 2 ** 32 - 1 }),
      scenarios,
      ...(keep ? { keep } : {}),
      log: (line) => process.stdout.write(`${line}\n`),
    };
    if (keep) mkdirSync(keep, { recursive: true });
  } catch (e) {
    if (e instanceof UserInputError) {
      const message = e.message.startsWith('chaos:') ? e.message : `chaos: ${e.message}`;
      process.stderr.write(`${message}\n\nusage: ${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  if (!isBuilt()) {
    process.stderr.write('chaos: the CLI is not built; run `npm run build` first\n');
    return 1;
  }
  const r = await runChaos(options);
  for (const p of r.problems) process.stdout.write(`problem: ${p}\n`);
  for (const n of r.notes) process.stdout.write(`note: ${n}\n`);
  process.stdout.write(
    `wall time ${(r.wallMs / 1000).toFixed(1)} s${options.keep ? `, files in ${r.dir}` : ''}\n`,
  );
  process.stdout.write(`${summaryLine(r)}\n`);
  return r.ok ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`chaos: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
