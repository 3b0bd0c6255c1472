/**
 * `npm run chaos -- [--kills N] [--seed S | --seeds LIST] [--scenario a,b] [--keep DIR]`: the chaos
 * suite's CLI. Prints one line per round, the problems and notes, then exactly one summary line per
 * seed (and with several seeds, one `chaos total:` line); exit 0 only when every seed's audit is
 * clean, 1 otherwise, 2 on a bad flag.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { intFlag, parseFlags } from '../src/cli/args.js';
import { UserInputError } from '../src/core/errors.js';
import { type AuditResult, summaryLine } from './audit.js';
import { runChaos } from './harness.js';
import { isBuilt } from './processes.js';
import { parseScenarios, SCENARIO_HELP, SCENARIOS } from './scenarios.js';

export const USAGE = `npm run chaos -- [--kills N] [--seed S | --seeds LIST] [--scenario NAME[,NAME]] [--keep DIR]

  --kills N        SIGKILL rounds before the clean round, per seed (default 20, 0..1000)
  --seed S         seed of the fault plan, the simulator and the proxy (default 1)
  --seeds LIST     several runs, one per seed: a range (1-5), a list (1,3,7) or both (1-3,9)
  --scenario LIST  fault families, comma-separated (default: all)
  --keep DIR       keep the run's files (world, config, ledger) in DIR (DIR/seed-S with --seeds)

Scenarios:
${SCENARIOS.map((s) => `  ${s.padEnd(12)} ${SCENARIO_HELP[s]}`).join('\n')}`;

const MAX_SEED = 2 ** 32 - 1;
const MAX_SEEDS = 100;

/** `1-5`, `1,3,7` or `1-3,9`: the seeds in the order given, each once. */
export function parseSeeds(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) throw new UserInputError(`--seeds: '${part}' is not a seed or a range like 1-5`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new UserInputError(`--seeds: the range '${part.trim()}' runs backwards`);
    if (to > MAX_SEED) throw new UserInputError(`--seeds: a seed must be at most ${MAX_SEED}`);
    if (to - from + 1 + out.length > MAX_SEEDS)
      throw new UserInputError(`--seeds: at most ${MAX_SEEDS} seeds in one run`);
    for (let s = from; s <= to; s++) if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** The seeds' figures added up, in the summary line's words. */
export function totalLine(results: readonly (AuditResult & { seed: number })[]): string {
  const sum = (f: (r: AuditResult) => number) => results.reduce((n, r) => n + f(r), 0);
  const failed = results.filter((r) => !r.ok).map((r) => r.seed);
  const diff = sum((r) => r.moneyDiffCents);
  const cards = sum((r) => r.cardOrders);
  return (
    `chaos total: ${results.length} seeds, ${sum((r) => r.kills)} kills, ${sum((r) => r.orders)} orders` +
    `${cards > 0 ? ` (${cards} cards)` : ''}, ${sum((r) => r.charges)} charges, ` +
    `${sum((r) => r.doubleCharges)} double charges, ${sum((r) => r.lostPulls)} lost pulls, ` +
    `${results.filter((r) => !r.capsKept).length} over a cap, ` +
    `${diff === 0 ? 'ledger = simulator' : `ledger - simulator = ${diff} cents`}; ` +
    (failed.length === 0 ? 'every seed clean' : `failed: seed ${failed.join(', ')}`)
  );
}

export async function main(argv: string[]): Promise<number> {
  let options: Omit<Parameters<typeof runChaos>[0], 'seed'>;
  let seeds: number[];
  try {
    const { values, positionals } = parseFlags(
      argv,
      {
        kills: { type: 'string' },
        seed: { type: 'string' },
        seeds: { type: 'string' },
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
    if (values.seed !== undefined && values.seeds !== undefined)
      throw new UserInputError('chaos: --seed and --seeds cannot be used together');
    let scenarios = [...SCENARIOS];
    if (values.scenario !== undefined) {
      try {
        scenarios = parseScenarios(values.scenario);
      } catch (e) {
        throw new UserInputError(`chaos: ${(e as Error).message}`);
      }
    }
    seeds =
      values.seeds !== undefined
        ? parseSeeds(values.seeds)
        : [intFlag(values.seed, 'seed', 1, { min: 0, max: MAX_SEED })];
    if (values.keep === '') throw new UserInputError('chaos: --keep needs a directory');
    const keep = values.keep === undefined ? undefined : resolve(values.keep);
    // A ledger left from another run would be audited against a fresh simulator.
    if (keep && existsSync(keep) && readdirSync(keep).length > 0)
      throw new UserInputError(`chaos: --keep ${values.keep}: the directory is not empty`);
    options = {
      kills: intFlag(values.kills, 'kills', 20, { min: 0, max: 1000 }),
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
  const several = seeds.length > 1;
  const results: (AuditResult & { seed: number })[] = [];
  for (const seed of seeds) {
    if (several) process.stdout.write(`== seed ${seed}\n`);
    const keep = options.keep && several ? join(options.keep, `seed-${seed}`) : options.keep;
    if (keep) mkdirSync(keep, { recursive: true });
    const r = await runChaos({ ...options, seed, ...(keep ? { keep } : {}) });
    for (const p of r.problems) process.stdout.write(`problem: ${p}\n`);
    for (const n of r.notes) process.stdout.write(`note: ${n}\n`);
    process.stdout.write(`wall time ${(r.wallMs / 1000).toFixed(1)} s${keep ? `, files in ${r.dir}` : ''}\n`);
    process.stdout.write(`${several ? `seed ${seed}: ` : ''}${summaryLine(r)}\n`);
    results.push({ ...r, seed });
  }
  if (several) {
    for (const r of results) process.stdout.write(`seed ${r.seed}: ${summaryLine(r)}\n`);
    process.stdout.write(`${totalLine(results)}\n`);
  }
  return results.every((r) => r.ok) ? 0 : 1;
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
