/**
 * Dry-run never touches the live books: paper trades go to their own ledger beside the live one
 * (`ledger.db` → `ledger.dry-run.db`, with its own lock and simulator state), so a live run after a
 * dry run finds nothing of it and `packbot report` counts no paper trade.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir, writeConfig } from './helpers.js';
import { built, startBot, stopBots } from './process.js';

afterEach(async () => {
  await stopBots();
  removeTempDirs();
});

describe.skipIf(!built())('dry-run books (child processes)', () => {
  it('a dry run then a live run leaves the live report empty', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, { baseUrl: 'embedded', keyEnv: 'PB_UNSET_KEY' });
    const paper = startBot(['run', '--config', config, '--dry-run']);
    await paper.waitFor('listed');
    paper.child.kill('SIGTERM');
    expect((await paper.exit).code).toBe(0);
    expect(existsSync(join(dir, 'ledger.dry-run.db'))).toBe(true);
    expect(existsSync(join(dir, 'ledger.dry-run.sim-state'))).toBe(true);
    expect(existsSync(join(dir, 'ledger.db'))).toBe(false);

    // The live run, paused by the kill switch file so it opens nothing of its own.
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'pause'), '');
    const live = startBot(['run', '--config', config]);
    await live.waitFor('packbot running');
    live.child.kill('SIGTERM');
    expect((await live.exit).code).toBe(0);

    const report = startBot(['report', '--config', config, '--json']);
    expect((await report.exit).code).toBe(0);
    const liveReport = JSON.parse(report.lines.join('\n')) as {
      totals: { orders: number; netCents: number };
    };
    expect(liveReport.totals).toMatchObject({ orders: 0, netCents: 0 });

    const paperReport = startBot(['report', '--config', config, '--json', '--dry-run']);
    expect((await paperReport.exit).code).toBe(0);
    const p = JSON.parse(paperReport.lines.join('\n')) as { totals: { orders: number } };
    expect(p.totals.orders).toBeGreaterThan(0);
  });
});
