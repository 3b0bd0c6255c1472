/**
 * Private books: after a run the store directory packbot created is 0700 and every file it wrote
 * there (ledger, WAL, SHM, writer lock, pause file, simulator state) 0600, whatever the umask; a
 * ledger an older packbot left readable is tightened at the next start, and `packbot doctor`
 * names one readable by others. A recorded snapshot is 0600 too.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeSnapshot } from '../../src/backtest/snapshot/snapshot.js';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { MINUTE_MS, VirtualClock } from '../../src/core/clock.js';
import { driveUntil, LogSink, START, TrackingClock } from '../bot/helpers.js';
import { runCli } from '../cli/run-cli.js';
import { generousStrategy, tempDir, writeConfig } from './helpers.js';

const TOKEN = 'private-files-token-0123456789';
const mode = (p: string) => statSync(p).mode & 0o777;
const dir = tempDir('packbot-private-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A config whose ledger lives in `<dir>/<sub>/ledger.db` (a directory packbot creates). */
function configIn(sub: string): string {
  const path = writeConfig(dir, {
    baseUrl: 'embedded',
    keyEnv: 'PB_UNSET_KEY',
    strategy: generousStrategy(dir),
    extra: '  token_env: PB_TOKEN',
  });
  const text = readFileSync(path, 'utf8');
  const own = join(dir, `${sub}.yaml`);
  writeFileSync(own, text.replace(`path: ${join(dir, 'ledger.db')}`, `path: ${join(dir, sub, 'ledger.db')}`));
  return own;
}

describe('private files', () => {
  it('after a run the store directory is 0700 and its files 0600, whatever the umask', async () => {
    // The most open umask: nothing but packbot's own modes keeps the files private.
    const old = process.umask(0);
    try {
      const config = loadBotConfig(configIn('data'), { PB_TOKEN: TOKEN });
      const clock = new TrackingClock(new VirtualClock(START));
      const runner = await Runner.start(config, { clock, logDestination: new LogSink() });
      await driveUntil(clock, START + 10 * MINUTE_MS, 3);
      await runner.control.pause({ by: 'test', reason: 'a pause file' });
      const store = join(dir, 'data');
      const during = readdirSync(store);
      expect(during).toEqual(
        expect.arrayContaining([
          'ledger.db',
          'ledger.db-wal',
          'ledger.db-shm',
          'ledger.db.lock',
          'ledger.db.paused',
          'ledger.sim-state',
        ]),
      );
      for (const f of during) expect([f, mode(join(store, f))]).toEqual([f, 0o600]);
      await runner.stop('test done');
      expect(mode(store)).toBe(0o700);
      for (const f of readdirSync(store)) expect([f, mode(join(store, f))]).toEqual([f, 0o600]);
    } finally {
      process.umask(old);
    }
  });

  it('tightens a ledger an older packbot left 0644; doctor names one readable by others', async () => {
    const store = join(dir, 'old');
    const path = configIn('old');
    const config = loadBotConfig(path, { PB_TOKEN: TOKEN });
    const clock = new TrackingClock(new VirtualClock(START));
    let runner = await Runner.start(config, { clock, logDestination: new LogSink() });
    await runner.stop('first run');
    for (const f of readdirSync(store)) chmodSync(join(store, f), 0o644);
    chmodSync(store, 0o755);

    const doctor = await runCli(['doctor', '--config', path, '--json']);
    const checks = JSON.parse(doctor.stdout).checks as { check: string; level: string; detail: string }[];
    const perms = checks.find((c) => c.check === 'ledger permissions')!;
    expect(perms.level).toBe('problem');
    expect(perms.detail).toContain(join(store, 'ledger.db'));
    expect(checks.find((c) => c.check === 'store directory')?.level).toBe('warn');
    expect(doctor.code).toBe(1);

    const sink = new LogSink();
    runner = await Runner.start(config, { clock, logDestination: sink });
    await runner.stop('second run');
    expect(mode(join(store, 'ledger.db'))).toBe(0o600);
    expect(mode(join(store, 'ledger.sim-state'))).toBe(0o600);
    // The directory is the operator's: left as it is, and said so.
    expect(mode(store)).toBe(0o755);
    expect(sink.messages().join('\n')).toContain('the store directory is open to other users');
  });

  it('a recorded snapshot is 0600', () => {
    mkdirSync(join(dir, 'snaps'), { mode: 0o755 });
    const file = join(dir, 'snaps', 'snap.json');
    const old = process.umask(0);
    try {
      writeSnapshot(file, { format: 'packbot.snapshot/v1', pools: [] } as never);
    } finally {
      process.umask(old);
    }
    expect(mode(file)).toBe(0o600);
  });
});
