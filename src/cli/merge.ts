/**
 * `packbot merge PART…`: combines the parts of a sharded backtest (`packbot backtest --shard K/N
 * --json part-K.json`) into the report the unsharded run gives: same summary for the same seed.
 */
import { renderHtml } from '../backtest/report/report-html.js';
import { terminalSummary } from '../backtest/report/terminal.js';
import { loadPart, mergeParts } from '../backtest/run/shard.js';
import { UsageError } from '../core/errors.js';
import { parseFlags } from './args.js';
import { writeAtomic } from './backtest.js';
import type { Command } from './command.js';

export const command: Command = {
  summary: 'merge the parts of a sharded backtest into one report',
  usage: 'packbot merge PART.json... [--json F] [--html F]',
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      { json: { type: 'string' }, html: { type: 'string' } },
      'merge',
    );
    if (positionals.length === 0)
      throw new UsageError('merge: give the part files (packbot merge part-*.json)');
    const report = mergeParts(positionals.map((file) => ({ file, part: loadPart(file) })));
    if (values.json) writeAtomic(values.json, `${JSON.stringify(report, null, 2)}\n`);
    if (values.html) writeAtomic(values.html, renderHtml(report));
    process.stdout.write(terminalSummary(report));
    return 0;
  },
};
