/**
 * One writer per ledger, as users meet it: a second `packbot run` on a ledger in use exits 2 at
 * once, naming the ledger and the holder, before writing a single log line; `packbot report` still
 * reads the ledger meanwhile; two ledgers in one directory keep separate simulator states.
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

describe.skipIf(!built())('one writer per ledger (child processes)', () => {
  it('refuses a second bot on the same ledger; report still works', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, { baseUrl: 'embedded', keyEnv: 'PB_UNSET_KEY' });
    const first = startBot(['run', '--config', config]);
    await first.waitFor('order confirmed');

    const second = startBot(['run', '--config', config]);
    const { code } = await second.exit;
    expect(code).toBe(2);
    const err = second.stderr.join('');
    expect(err).toContain(`ledger ${join(dir, 'ledger.db')} is in use by process ${first.child.pid} on `);
    expect(err).not.toMatch(/\n\s+at /);
    expect(second.lines).toEqual([]); // refused before the logger, the ledger or the simulator
    expect(first.child.exitCode).toBeNull(); // the first keeps trading

    const report = startBot(['report', '--config', config]);
    expect((await report.exit).code).toBe(0);

    first.child.kill('SIGTERM');
    expect((await first.exit).code).toBe(0);
    expect(existsSync(join(dir, 'ledger.sim-state'))).toBe(true);
    expect(existsSync(join(dir, 'embedded-sim.state'))).toBe(false);
  });
});
