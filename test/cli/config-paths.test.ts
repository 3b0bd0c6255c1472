/**
 * A config's relative paths are relative to the config file, so every command finds the books the
 * bot wrote whatever directory it is started from: `packbot status --config /etc/packbot/bot.yaml`
 * run from a home directory reads /etc/packbot's ledger, not one under the home directory.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/store/ledger.js';
import { BALANCED } from '../e2e/helpers.js';
import { BIN, built } from '../e2e/process.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { runCli } from './run-cli.js';

let dir: string;
let config: string;

beforeAll(() => {
  dir = tempDir('packbot-paths-');
  mkdirSync(join(dir, 'strategies'));
  copyFileSync(BALANCED, join(dir, 'strategies/s.yaml'));
  config = join(dir, 'bot.yaml');
  writeFileSync(
    config,
    [
      'format: packbot.config/v1',
      'api:',
      '  base_url: embedded',
      '  key_env: PB_UNSET_KEY',
      'accounts:',
      '  - name: main',
      '    strategy: strategies/s.yaml',
      'store:',
      '  path: data/ledger.db',
      // Off: status would otherwise ask whatever bot listens on the default port.
      'metrics:',
      '  enabled: false',
      'control:',
      '  kill_switch_file: data/pause',
      '',
    ].join('\n'),
  );
  // The books a bot run with this config leaves: live, paper, and the kill switch file on.
  mkdirSync(join(dir, 'data'));
  for (const f of ['ledger.db', 'ledger.dry-run.db']) Ledger.open(join(dir, 'data', f)).close();
  writeFileSync(join(dir, 'data/pause'), '');
});
afterAll(removeTempDirs);

describe('commands find the books beside the config (in-process, the repo as working directory)', () => {
  it('status reads the ledger and the kill switch file next to the config', async () => {
    const r = await runCli(['status', '--config', config, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ source: 'ledger', ledger: join(dir, 'data/ledger.db') });
    expect(out.status.pause).toMatchObject({ paused: true, reasons: ['file'] });
  });

  it('report reads the live ledger, and with --dry-run the paper one derived from it', async () => {
    for (const args of [[], ['--dry-run']]) {
      const r = await runCli(['report', '--config', config, '--json', ...args]);
      expect([r.code, r.stderr]).toEqual([0, '']);
    }
    const orders = await runCli(['orders', '--config', config, '--json']);
    expect([orders.code, orders.stderr]).toEqual([0, '']);
  });

  it('validate accepts the config', async () => {
    const r = await runCli(['validate', config]);
    expect([r.code, r.stderr]).toEqual([0, '']);
  });
});

describe.skipIf(!built())('the built CLI from another working directory (child processes)', () => {
  const packbot = (cwd: string, ...args: string[]) =>
    spawnSync(process.execPath, [BIN, ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, PACKBOT_DEBUG: '' },
    });

  it('status, report and validate by an absolute --config, creating nothing where they run', () => {
    const elsewhere = tempDir('packbot-elsewhere-');
    const status = packbot(elsewhere, 'status', '--config', config, '--json');
    expect([status.status, status.stderr]).toEqual([0, '']);
    expect(JSON.parse(status.stdout)).toMatchObject({
      source: 'ledger',
      ledger: join(dir, 'data/ledger.db'),
    });
    for (const args of [
      ['report', '--config', config, '--json'],
      ['report', '--config', config, '--dry-run'],
      ['validate', config],
    ]) {
      const r = packbot(elsewhere, ...args);
      expect([args, r.status, r.stderr]).toEqual([args, 0, '']);
    }
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('run refuses to start empty books while the working directory holds the old ones', () => {
    const moved = join(dir, 'moved.yaml');
    writeFileSync(
      moved,
      readFileSync(config, 'utf8').replace('path: data/ledger.db', 'path: moved/ledger.db'),
    );
    const home = tempDir('packbot-home-');
    mkdirSync(join(home, 'moved'));
    Ledger.open(join(home, 'moved/ledger.db')).close();
    const run = packbot(home, 'run', '--config', moved);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      `${moved}:9:9: store.path: no ledger at ${join(dir, 'moved/ledger.db')}, but one at ${join(home, 'moved/ledger.db')}`,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dir, 'moved'))).toBe(false);
  });

  it('a relative --config is relative to the working directory, its paths to the config', () => {
    const status = packbot(dirname(dir), 'status', '--config', join(basename(dir), 'bot.yaml'), '--json');
    expect([status.status, status.stderr]).toEqual([0, '']);
    expect(JSON.parse(status.stdout).ledger).toBe(join(dir, 'data/ledger.db'));
  });
});
