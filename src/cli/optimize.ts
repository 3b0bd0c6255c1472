/**
 * `packbot optimize`: searches a space of strategy parameters (`packbot.space/v1`) around a base
 * strategy by a race over Monte Carlo backtests on common random numbers (or successive halving,
 * `--race off`), then checks the winner against the base on fresh paths. Writes best.yaml,
 * trials.json and an HTML report; prints the top ten. `--plan`, `--rung … --shard` and
 * `--merge-rung` run the same search sharded, one batch at a time (optimize-sharded.ts).
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { renderOptimizeHtml } from '../backtest/optimize/html.js';
import { bestYaml, terminalTable, trialsJson } from '../backtest/optimize/output.js';
import type { OptimizeResult } from '../backtest/optimize/result.js';
import { OptimizeAborted, runOptimize } from '../backtest/optimize/search.js';
import type { SearchInput } from '../backtest/optimize/setup.js';
import { parseShard } from '../backtest/run/shard.js';
import { loadSnapshot } from '../backtest/snapshot/load.js';
import { loadFile } from '../config/load.js';
import { SpaceFile } from '../config/space-file.js';
import { loadStrategy } from '../config/strategy-file.js';
import { UsageError } from '../core/errors.js';
import { intFlag, parseFlags } from './args.js';
import { checkStrategyMatchesSnapshot, writeAtomic } from './backtest.js';
import { balanceFlag, loadDynamics, marketFlag } from './backtest-flags.js';
import type { Command } from './command.js';
import { mergeRung, planSearch, runShard } from './optimize-sharded.js';

const USAGE =
  'packbot optimize --snapshot F --strategy BASE --space SPACE [--trials 50] [--paths 1000] [--days 30] ' +
  '[--seed N] [--market static|dynamic] [--workers N] [--balance USD] [--dynamics F] [--race on|off] [--race-alpha 0.05] ' +
  '[--out DIR] [--json F] [--html F]\n' +
  '  --out DIR writes DIR/best.yaml, DIR/trials.json and DIR/report.html\n' +
  '  sharded: the same flags with --plan DIR; then for R = 1, 2, … while DIR/rung-R.json exists:\n' +
  '  packbot optimize --dir DIR --rung R --shard K/N [--workers N] (each K), then\n' +
  '  packbot optimize --dir DIR --merge-rung R [--out DIR --json F --html F]';

/** Flags that define a search: given once, to the plan; the steps read them from DIR/search.json. */
const SEARCH_FLAGS = [
  'snapshot',
  'strategy',
  'space',
  'trials',
  'paths',
  'days',
  'seed',
  'market',
  'balance',
  'dynamics',
  'race',
  'race-alpha',
] as const;

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

function alphaFlag(value: string | undefined): number {
  if (value === undefined) return 0.05;
  const a = Number(value);
  if (!/^\d*\.?\d+(e-?\d+)?$/i.test(value) || !(a > 0 && a < 0.5))
    throw new UsageError(`--race-alpha must be a number between 0 and 0.5 (e.g. 0.05), got '${value}'`);
  return a;
}

function raceFlag(value: string | undefined): 'race' | 'halving' {
  if (value === undefined || value === 'on') return 'race';
  if (value === 'off') return 'halving';
  throw new UsageError(`--race must be on or off, got '${value}'`);
}

function writeOutputs(result: OptimizeResult, values: { out?: string; json?: string; html?: string }): void {
  if (values.out) {
    mkdirSync(values.out, { recursive: true });
    writeAtomic(join(values.out, 'best.yaml'), bestYaml(result));
    writeAtomic(join(values.out, 'trials.json'), trialsJson(result));
    writeAtomic(join(values.out, 'report.html'), renderOptimizeHtml(result));
  }
  if (values.json) writeAtomic(values.json, trialsJson(result));
  if (values.html) writeAtomic(values.html, renderOptimizeHtml(result));
  process.stdout.write(terminalTable(result));
}

/** Ctrl-C stops the run at the next result (a second one quits). */
function interruptible(what: string): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write(`\npackbot: interrupted; stopping the ${what} (Ctrl-C again to quit)\n`);
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  return { signal: controller.signal, done: () => process.off('SIGINT', onSigint) };
}

export const command: Command = {
  summary: 'search strategy parameters by backtest (a race on common random numbers, out-of-sample check)',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        snapshot: { type: 'string' },
        strategy: { type: 'string' },
        space: { type: 'string' },
        trials: { type: 'string' },
        paths: { type: 'string' },
        days: { type: 'string' },
        seed: { type: 'string' },
        market: { type: 'string' },
        workers: { type: 'string' },
        balance: { type: 'string' },
        dynamics: { type: 'string' },
        race: { type: 'string' },
        'race-alpha': { type: 'string' },
        out: { type: 'string' },
        json: { type: 'string' },
        html: { type: 'string' },
        plan: { type: 'string' },
        dir: { type: 'string' },
        rung: { type: 'string' },
        shard: { type: 'string' },
        'merge-rung': { type: 'string' },
      },
      'optimize',
    );
    if (positionals.length > 0) throw new UsageError(`optimize: unexpected argument '${positionals[0]}'`);
    const workers = intFlag(values.workers, 'workers', availableParallelism(), { min: 0, max: 256 });
    if (
      values.dir !== undefined ||
      values.rung !== undefined ||
      values.shard !== undefined ||
      values['merge-rung'] !== undefined
    )
      return await step(values, workers);

    for (const f of ['snapshot', 'strategy', 'space'] as const)
      if (!values[f]) throw new UsageError(`optimize: --${f} F is required`);
    const method = raceFlag(values.race);
    const alpha = alphaFlag(values['race-alpha']);
    if (method === 'halving' && values['race-alpha'] !== undefined)
      throw new UsageError("optimize: --race-alpha is the race's error rate: it has no use with --race off");
    const input: SearchInput = {
      snapshot: loadSnapshot(values.snapshot!),
      base: loadStrategy(values.strategy!),
      space: loadFile(values.space!, SpaceFile),
      trials: intFlag(values.trials, 'trials', 50, { min: 1, max: 100_000 }),
      paths: intFlag(values.paths, 'paths', 1000, { min: 2, max: 10_000_000 }),
      days: intFlag(values.days, 'days', 30, { min: 1, max: 3650 }),
      seed: intFlag(values.seed, 'seed', 1, { min: 0, max: 4_294_967_295 }),
      market: marketFlag(values.market),
      method,
      race: { alpha },
    };
    const balanceUsd = balanceFlag(values.balance);
    if (balanceUsd !== undefined) input.balanceUsd = balanceUsd;
    if (values.dynamics) input.dynamics = loadDynamics(values.dynamics);
    checkStrategyMatchesSnapshot(values.strategy!, values.snapshot!, input.base, input.snapshot);
    const labels = { strategy: values.strategy!, snapshot: values.snapshot!, space: values.space! };

    if (values.plan !== undefined) {
      for (const f of ['out', 'json', 'html'] as const)
        if (values[f] !== undefined)
          throw new UsageError(`optimize: --${f} goes to the last --merge-rung, not to --plan`);
      const files = {
        snapshot: values.snapshot!,
        strategy: values.strategy!,
        space: values.space!,
        ...(values.dynamics ? { dynamics: values.dynamics } : {}),
      };
      process.stdout.write(planSearch(values.plan, input, files, labels));
      return 0;
    }

    const tty = process.stderr.isTTY === true;
    const stop = interruptible('search');
    const t0 = performance.now();
    let lastDraw = 0;
    try {
      const result = await runOptimize({
        ...input,
        workers,
        labels,
        signal: stop.signal,
        onProgress: ({ done, total, stage }) => {
          if (!tty) return;
          const t = performance.now();
          if (done < total && t - lastDraw < 250) return;
          lastDraw = t;
          const elapsed = t - t0;
          const eta = done > 0 ? (elapsed * (total - done)) / done : 0;
          const pct = total > 0 ? ((100 * done) / total).toFixed(1) : '0.0';
          process.stderr.write(`\r\x1b[K${stage}  ${done}/${total} paths (${pct}%)  ETA ≤ ${duration(eta)}`);
        },
      });
      if (tty) process.stderr.write('\r\x1b[K');
      writeOutputs(result, values);
      return 0;
    } catch (e) {
      if (e instanceof OptimizeAborted) {
        process.stderr.write('packbot: optimize interrupted: nothing written\n');
        return 130;
      }
      throw e;
    } finally {
      stop.done();
    }
  },
};

/** One step of a sharded search: `--dir DIR` with `--rung R --shard K/N` or `--merge-rung R`. */
async function step(values: Partial<Record<string, string>>, workers: number): Promise<number> {
  for (const f of SEARCH_FLAGS)
    if (values[f] !== undefined)
      throw new UsageError(
        `optimize: --${f} belongs to --plan; a step reads the search's settings from DIR/search.json`,
      );
  if (values.plan !== undefined)
    throw new UsageError('optimize: --plan DIR starts a search; --dir DIR runs its steps');
  const dir = values.dir;
  if (!dir)
    throw new UsageError("optimize: --rung, --shard and --merge-rung need --dir DIR (the plan's directory)");
  const merging = values['merge-rung'] !== undefined;
  if (merging === (values.rung !== undefined))
    throw new UsageError('optimize --dir: give either --rung R --shard K/N or --merge-rung R');
  const rung = intFlag(merging ? values['merge-rung'] : values.rung, merging ? 'merge-rung' : 'rung', 1, {
    min: 1,
    max: 10_000,
  });
  if (merging) {
    if (values.shard !== undefined) throw new UsageError('optimize: --shard is for --rung, not --merge-rung');
    const r = mergeRung(dir, rung);
    // --out, --json and --html are written by the merge that ends the search (the same command
    // for every rung, so a driver need not know which one that is).
    if ('next' in r) {
      process.stdout.write(r.next);
    } else writeOutputs(r.result, values);
    return 0;
  }
  if (values.shard === undefined)
    throw new UsageError('optimize: --rung R needs --shard K/N (1/1 for all of it)');
  for (const f of ['out', 'json', 'html'] as const)
    if (values[f] !== undefined)
      throw new UsageError(`optimize: --${f} goes to the last --merge-rung, not to a shard`);
  const shard = parseShard(values.shard);
  const stop = interruptible('shard');
  try {
    process.stdout.write(await runShard(dir, rung, shard, workers, stop.signal));
    return 0;
  } finally {
    stop.done();
  }
}
