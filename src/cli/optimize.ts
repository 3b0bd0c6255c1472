/**
 * `packbot optimize`: searches a space of strategy parameters (`packbot.space/v1`) around a base
 * strategy by successive halving over Monte Carlo backtests, then checks the winner against the
 * base on fresh paths. Writes best.yaml, trials.json and an HTML report; prints the top ten.
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { loadSnapshot } from '../backtest/load.js';
import { renderOptimizeHtml } from '../backtest/optimize/html.js';
import { bestYaml, terminalTable, trialsJson } from '../backtest/optimize/output.js';
import { OptimizeAborted, runOptimize } from '../backtest/optimize/search.js';
import { loadFile } from '../config/load.js';
import { SpaceFile } from '../config/space-file.js';
import { loadStrategy } from '../config/strategy-file.js';
import { UsageError } from '../core/errors.js';
import { intFlag, parseFlags } from './args.js';
import { checkStrategyMatchesSnapshot, writeAtomic } from './backtest.js';
import { balanceFlag, loadDynamics, marketFlag } from './backtest-flags.js';
import type { Command } from './command.js';

const USAGE =
  'packbot optimize --snapshot F --strategy BASE --space SPACE [--trials 50] [--paths 1000] [--days 30] ' +
  '[--seed N] [--market static|dynamic] [--workers N] [--balance USD] [--dynamics F] [--out DIR] [--json F] [--html F]\n' +
  '  --out DIR writes DIR/best.yaml, DIR/trials.json and DIR/report.html';

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

export const command: Command = {
  summary: 'search strategy parameters by backtest (successive halving, out-of-sample check)',
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
        out: { type: 'string' },
        json: { type: 'string' },
        html: { type: 'string' },
      },
      'optimize',
    );
    if (positionals.length > 0) throw new UsageError(`optimize: unexpected argument '${positionals[0]}'`);
    for (const f of ['snapshot', 'strategy', 'space'] as const)
      if (!values[f]) throw new UsageError(`optimize: --${f} F is required`);
    const trials = intFlag(values.trials, 'trials', 50, { min: 1, max: 100_000 });
    const paths = intFlag(values.paths, 'paths', 1000, { min: 2, max: 10_000_000 });
    const days = intFlag(values.days, 'days', 30, { min: 1, max: 3650 });
    const seed = intFlag(values.seed, 'seed', 1, { min: 0, max: 4_294_967_295 });
    const workers = intFlag(values.workers, 'workers', availableParallelism(), { min: 0, max: 256 });
    const market = marketFlag(values.market);
    const balanceUsd = balanceFlag(values.balance);
    const space = loadFile(values.space!, SpaceFile);
    const snapshot = loadSnapshot(values.snapshot!);
    const base = loadStrategy(values.strategy!);
    const dynamics = values.dynamics ? loadDynamics(values.dynamics) : undefined;
    checkStrategyMatchesSnapshot(values.strategy!, values.snapshot!, base, snapshot);

    const tty = process.stderr.isTTY === true;
    const controller = new AbortController();
    const onSigint = () => {
      if (controller.signal.aborted) process.exit(130);
      process.stderr.write('\npackbot: interrupted; stopping the search (Ctrl-C again to quit)\n');
      controller.abort();
    };
    process.on('SIGINT', onSigint);
    const t0 = performance.now();
    let lastDraw = 0;
    try {
      const result = await runOptimize({
        snapshot,
        base,
        space,
        trials,
        paths,
        days,
        seed,
        market,
        workers,
        ...(balanceUsd !== undefined ? { balanceUsd } : {}),
        ...(dynamics ? { dynamics } : {}),
        labels: { strategy: values.strategy!, snapshot: values.snapshot!, space: values.space! },
        signal: controller.signal,
        onProgress: ({ done, total, stage }) => {
          if (!tty) return;
          const t = performance.now();
          if (done < total && t - lastDraw < 250) return;
          lastDraw = t;
          const elapsed = t - t0;
          const eta = done > 0 ? (elapsed * (total - done)) / done : 0;
          const pct = total > 0 ? ((100 * done) / total).toFixed(1) : '0.0';
          process.stderr.write(`\r\x1b[K${stage}  ${done}/${total} paths (${pct}%)  ETA ${duration(eta)}`);
        },
      });
      if (tty) process.stderr.write('\r\x1b[K');
      if (values.out) {
        mkdirSync(values.out, { recursive: true });
        writeAtomic(join(values.out, 'best.yaml'), bestYaml(result));
        writeAtomic(join(values.out, 'trials.json'), trialsJson(result));
        writeAtomic(join(values.out, 'report.html'), renderOptimizeHtml(result));
      }
      if (values.json) writeAtomic(values.json, trialsJson(result));
      if (values.html) writeAtomic(values.html, renderOptimizeHtml(result));
      process.stdout.write(terminalTable(result));
      return 0;
    } catch (e) {
      if (e instanceof OptimizeAborted) {
        process.stderr.write('packbot: optimize interrupted: nothing written\n');
        return 130;
      }
      throw e;
    } finally {
      process.off('SIGINT', onSigint);
    }
  },
};
