/**
 * `npm run chaos -- [--kills N] [--seed S | --seeds LIST] [--world F | --worlds all] [--scenario a,b]
 * [--keep DIR]`: the chaos suite's CLI. Prints one line per round, the problems and notes, then
 * exactly one summary line per run (and with several runs, one `chaos total:` line); exit 0 only
 * when every run's audit is clean, 1 otherwise, 2 on a bad flag. A run is a seed on a world: the
 * default server or one of the alternative legal servers (worlds.ts).
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { intFlag, parseFlags } from '../src/cli/args.js';
import { loadWorld } from '../src/config/world-file.js';
import { UserInputError } from '../src/core/errors.js';
import { type AuditResult, summaryLine } from './audit.js';
import { runChaos } from './harness.js';
import { isBuilt } from './processes.js';
import { parseScenarios, SCENARIO_HELP, SCENARIOS } from './scenarios.js';
import { ALL_WORLDS, worldLabel } from './worlds.js';

export const USAGE = `npm run chaos -- [--kills N] [--seed S | --seeds LIST] [--world FILE | --worlds all] [--scenario NAME[,NAME]] [--keep DIR]

  --kills N        SIGKILL rounds before the clean round, per run (default 20, 0..1000)
  --seed S         seed of the fault plan, the simulator and the proxy (default 1)
  --seeds LIST     several runs, one per seed: a range (1-5), a list (1,3,7) or both (1-3,9)
  --world FILE     the server's choices where the spec is silent: this world file's rules
                   (default, or config/worlds/alt-*.yaml); the suite's packs and limits stay
  --worlds all     every seed on each of ${ALL_WORLDS.map(worldLabel).join(', ')}
                   (without --world or --worlds, seed S runs on the ((S-1) mod ${ALL_WORLDS.length})th of them)
  --scenario LIST  fault families, comma-separated (default: all)
  --keep DIR       keep the run's files (world, config, ledger) in DIR (DIR/seed-S-WORLD with several runs)

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

/** The world each seed runs on: `--world`, every world (`--worlds all`), or one by turns. */
export function plannedRuns(
  seeds: readonly number[],
  world: string | undefined,
  all: boolean,
): { seed: number; world: string }[] {
  if (world !== undefined) return seeds.map((seed) => ({ seed, world }));
  if (all) return seeds.flatMap((seed) => ALL_WORLDS.map((w) => ({ seed, world: w })));
  return seeds.map((seed) => ({ seed, world: ALL_WORLDS[(seed - 1) % ALL_WORLDS.length]! }));
}

type RunResult = AuditResult & { seed: number; world?: string };
const runName = (r: RunResult) => `seed ${r.seed}${r.world ? ` (${r.world})` : ''}`;

/** The runs' figures added up, in the summary line's words. */
export function totalLine(results: readonly RunResult[]): string {
  const sum = (f: (r: AuditResult) => number) => results.reduce((n, r) => n + f(r), 0);
  const failed = results.filter((r) => !r.ok).map(runName);
  const runs = results.some((r) => r.world) ? 'runs' : 'seeds';
  const diff = sum((r) => r.moneyDiffCents);
  const cards = sum((r) => r.cardOrders);
  return (
    `chaos total: ${results.length} ${runs}, ${sum((r) => r.kills)} kills, ${sum((r) => r.orders)} orders` +
    `${cards > 0 ? ` (${cards} cards)` : ''}, ${sum((r) => r.charges)} charges, ` +
    `${sum((r) => r.doubleCharges)} double charges, ${sum((r) => r.lostPulls)} lost pulls, ` +
    `${results.filter((r) => !r.capsKept).length} over a cap, ` +
    `${diff === 0 ? 'ledger = simulator' : `ledger - simulator = ${diff} cents`}; ` +
    (failed.length === 0 ? `every ${runs.slice(0, -1)} clean` : `failed: ${failed.join(', ')}`)
  );
}

export async function main(argv: string[]): Promise<number> {
  let options: Omit<Parameters<typeof runChaos>[0], 'seed'>;
  let runs: { seed: number; world: string }[];
  try {
    const { values, positionals } = parseFlags(
      argv,
      {
        kills: { type: 'string' },
        seed: { type: 'string' },
        seeds: { type: 'string' },
        scenario: { type: 'string' },
        world: { type: 'string' },
        worlds: { type: 'string' },
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
    const seeds =
      values.seeds !== undefined
        ? parseSeeds(values.seeds)
        : [intFlag(values.seed, 'seed', 1, { min: 0, max: MAX_SEED })];
    if (values.world !== undefined && values.worlds !== undefined)
      throw new UserInputError('chaos: --world and --worlds cannot be used together');
    if (values.worlds !== undefined && values.worlds !== 'all')
      throw new UserInputError(`chaos: --worlds takes 'all', got '${values.worlds}'`);
    let world: string | undefined;
    if (values.world !== undefined) {
      world = values.world === 'default' ? ALL_WORLDS[0]! : resolve(values.world);
      if (!existsSync(world)) throw new UserInputError(`chaos: --world ${values.world}: no such file`);
      // A bad world file is named by file, line and field before anything starts.
      loadWorld(world);
    }
    runs = plannedRuns(seeds, world, values.worlds === 'all');
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
  const several = runs.length > 1;
  const results: RunResult[] = [];
  for (const { seed, world } of runs) {
    const label = worldLabel(world);
    if (several) process.stdout.write(`== seed ${seed} (${label})\n`);
    const keep = options.keep && several ? join(options.keep, `seed-${seed}-${label}`) : options.keep;
    if (keep) mkdirSync(keep, { recursive: true });
    const r = await runChaos({ ...options, seed, world, ...(keep ? { keep } : {}) });
    for (const p of r.problems) process.stdout.write(`problem: ${p}\n`);
    for (const n of r.notes) process.stdout.write(`note: ${n}\n`);
    process.stdout.write(`wall time ${(r.wallMs / 1000).toFixed(1)} s${keep ? `, files in ${r.dir}` : ''}\n`);
    const result = { ...r, seed, world: label };
    process.stdout.write(`${several ? `${runName(result)}: ` : ''}${summaryLine(r)}\n`);
    results.push(result);
  }
  if (several) {
    for (const r of results) process.stdout.write(`${runName(r)}: ${summaryLine(r)}\n`);
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
