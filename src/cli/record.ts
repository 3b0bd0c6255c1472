/**
 * `packbot record`: a snapshot series into a directory, one file per interval (src/backtest/snapshot/record.ts
 * has the loop). Resumable: run it again with the same directory and it goes on where it stopped.
 */
import { recordSeries } from '../backtest/snapshot/record.js';
import { loadBotConfig } from '../config/bot-config.js';
import { iso, WallClock } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import { ensurePrivateDir } from '../store/private-files.js';
import { categoriesFlag, durationFlag, intFlag, parseFlags } from './args.js';
import type { Command } from './command.js';
import { connect } from './connect.js';

const USAGE =
  'packbot record --config F --out DIR --every 1h [--count N | --duration 7d] [--categories a,b] [--no-shop]';

export const command: Command = {
  summary: 'record a snapshot every interval into a directory',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        config: { type: 'string' },
        out: { type: 'string' },
        every: { type: 'string' },
        count: { type: 'string' },
        duration: { type: 'string' },
        categories: { type: 'string' },
        'no-shop': { type: 'boolean' },
      },
      'record',
    );
    if (positionals.length > 0)
      throw new UsageError(`record: unexpected argument '${positionals[0]}' (${USAGE})`);
    if (!values.out) throw new UsageError(`record: --out DIR is required (${USAGE})`);
    if (!values.every) throw new UsageError(`record: --every is required, e.g. --every 1h (${USAGE})`);
    if (values.count !== undefined && values.duration !== undefined)
      throw new UsageError('record: give --count or --duration, not both');
    const everyMs = durationFlag(values.every, 'every')!;
    const count = values.count === undefined ? undefined : intFlag(values.count, 'count', 0, { min: 1 });
    const durationMs = durationFlag(values.duration, 'duration');
    const categories = categoriesFlag(values.categories);
    const config = loadBotConfig(values.config ?? 'config/bot.yaml');
    ensurePrivateDir(values.out);

    const clock = new WallClock();
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    const tty = process.stderr.isTTY === true;
    const goal = count !== undefined ? `/${count}` : '';
    const { api, source, close } = await connect(config, clock);
    try {
      const r = await recordSeries({
        api,
        clock,
        dir: values.out,
        everyMs,
        shop: values['no-shop'] !== true,
        source,
        serverNow: () => api.serverNow(),
        signal: controller.signal,
        ...(count !== undefined ? { count } : {}),
        ...(durationMs !== undefined ? { durationMs } : {}),
        ...(categories ? { categories } : {}),
        onWritten: (file, total) => {
          if (tty) process.stderr.write('\r\x1b[K');
          process.stdout.write(`record: ${total}${goal} ${file}\n`);
        },
        onWaiting: (dueAt, total) => {
          if (tty) process.stderr.write(`\r\x1b[Krecord: ${total}${goal} snapshots, next at ${iso(dueAt)}`);
        },
        onSkipped: (e, retryAt) =>
          process.stderr.write(
            `${tty ? '\r\x1b[K' : ''}record: this interval failed (${e instanceof Error ? e.message : String(e)}); next try at ${iso(retryAt)}\n`,
          ),
      });
      if (tty) process.stderr.write('\r\x1b[K');
      process.stdout.write(
        `record: ${r.written} written, ${r.total} in ${values.out}${r.interrupted ? ' (interrupted: complete files only)' : ''}\n`,
      );
      return r.interrupted ? 130 : 0;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await close();
    }
  },
};
