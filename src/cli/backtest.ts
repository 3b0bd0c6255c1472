/**
 * `packbot backtest`: Monte Carlo backtest of a strategy against a snapshot. Inputs are validated
 * before anything runs; Ctrl-C stops the paths cleanly and the results are written marked partial.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { renderHtml } from '../backtest/report/report-html.js';
import { progressBar, terminalSummary } from '../backtest/report/terminal.js';
import { runBacktestPaths } from '../backtest/run/run.js';
import { makePart, parseShard } from '../backtest/run/shard.js';
import { strategyMisfit } from '../backtest/run/strategy-fit.js';
import { loadSnapshot } from '../backtest/snapshot/load.js';
import { loadStrategy } from '../config/strategy-file.js';
import { UsageError } from '../core/errors.js';
import { intFlag, parseFlags } from './args.js';
import { balanceFlag, loadDynamics, marketFlag } from './backtest-flags.js';
import type { Command } from './command.js';

const USAGE =
  'packbot backtest --snapshot F --strategy F [--days 30] [--paths 1000] [--seed N] [--market static|dynamic] ' +
  '[--workers N] [--balance USD] [--dynamics F] [--shard K/N] [--json F] [--html F]\n' +
  '  --shard K/N runs the paths i with i % N = K-1; --json then writes a part for `packbot merge`';

export function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export const command: Command = {
  summary: 'Monte Carlo backtest of a strategy against a snapshot',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        snapshot: { type: 'string' },
        strategy: { type: 'string' },
        days: { type: 'string' },
        paths: { type: 'string' },
        seed: { type: 'string' },
        market: { type: 'string' },
        workers: { type: 'string' },
        balance: { type: 'string' },
        dynamics: { type: 'string' },
        shard: { type: 'string' },
        json: { type: 'string' },
        html: { type: 'string' },
      },
      'backtest',
    );
    if (positionals.length > 0) throw new UsageError(`backtest: unexpected argument '${positionals[0]}'`);
    if (!values.snapshot) throw new UsageError('backtest: --snapshot F is required');
    if (!values.strategy) throw new UsageError('backtest: --strategy F is required');
    const days = intFlag(values.days, 'days', 30, { min: 1, max: 3650 });
    const paths = intFlag(values.paths, 'paths', 1000, { min: 1, max: 10_000_000 });
    const seed = intFlag(values.seed, 'seed', 1, { min: 0, max: 4_294_967_295 });
    const workers = intFlag(values.workers, 'workers', availableParallelism(), { min: 0, max: 256 });
    const market = marketFlag(values.market);
    const balanceUsd = balanceFlag(values.balance);
    const shard = values.shard !== undefined ? parseShard(values.shard) : undefined;
    const snapshot = loadSnapshot(values.snapshot);
    const strategy = loadStrategy(values.strategy);
    const dynamics = values.dynamics ? loadDynamics(values.dynamics) : undefined;
    checkStrategyMatchesSnapshot(values.strategy, values.snapshot, strategy, snapshot);

    const tty = process.stderr.isTTY === true;
    const controller = new AbortController();
    const onSigint = () => {
      if (controller.signal.aborted) process.exit(130);
      process.stderr.write(
        '\npackbot: interrupted; finishing the paths in progress (Ctrl-C again to quit)\n',
      );
      controller.abort();
    };
    process.on('SIGINT', onSigint);
    let lastDraw = 0;
    try {
      const opts = {
        snapshot,
        strategy,
        days,
        paths,
        seed,
        market,
        workers,
        ...(balanceUsd !== undefined ? { balanceUsd } : {}),
        ...(dynamics ? { dynamics } : {}),
        ...(shard ? { shard } : {}),
        strategyLabel: values.strategy,
        snapshotLabel: values.snapshot,
      } as const;
      const run = await runBacktestPaths({
        ...opts,
        signal: controller.signal,
        onProgress: (done, total) => {
          if (!tty) return;
          const t = performance.now();
          if (done < total && t - lastDraw < 100) return;
          lastDraw = t;
          process.stderr.write(`\r${progressBar(done, total)}`);
          if (done === total) process.stderr.write('\n');
        },
      });
      const report = run.report;
      if (tty && report.partial) process.stderr.write('\n');
      // A shard's JSON is its part (per-path data for `packbot merge`), compact: it is large.
      if (values.json)
        writeAtomic(
          values.json,
          shard ? `${JSON.stringify(makePart(opts, run))}\n` : `${JSON.stringify(report, null, 2)}\n`,
        );
      if (shard) process.stdout.write(`shard ${shard.index}/${shard.count} of ${paths} paths\n`);
      if (values.html) writeAtomic(values.html, renderHtml(report));
      process.stdout.write(terminalSummary(report));
      return report.partial ? 130 : 0;
    } finally {
      process.off('SIGINT', onSigint);
    }
  },
};

export function checkStrategyMatchesSnapshot(
  strategyFile: string,
  snapshotFile: string,
  strategy: ReturnType<typeof loadStrategy>,
  snapshot: ReturnType<typeof loadSnapshot>,
): void {
  const misfit = strategyMisfit(strategy, snapshot);
  if (misfit)
    throw new UsageError(
      `${strategyFile}: ${misfit.field}: ${misfit.message.replace('the snapshot', snapshotFile)}`,
    );
}
