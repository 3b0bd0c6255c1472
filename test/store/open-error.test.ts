import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Ledger } from '../../src/store/ledger.js';
import { LedgerOpenError, ledgerOpenError } from '../../src/store/open-error.js';
import { LogSink, START } from '../bot/helpers.js';
import { runCli } from '../cli/run-cli.js';
import { writeConfig } from '../e2e/helpers.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';

afterEach(removeTempDirs);

const err = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('ledgerOpenError', () => {
  it.each([
    ['SQLITE_NOTADB', /not a SQLite database/],
    ['SQLITE_CORRUPT', /damaged/],
    ['SQLITE_READONLY', /read-only/],
    ['SQLITE_READONLY_DBMOVED', /read-only/],
    ['SQLITE_CANTOPEN', /cannot be opened/],
    ['SQLITE_FULL', /disk full/],
    ['EACCES', /no permission/],
    ['EROFS', /read-only file system/],
  ])('%s is named with the path and what is wrong', (code, reason) => {
    const e = ledgerOpenError('/data/packbot.db', err(code, 'detail'));
    expect(e).toBeInstanceOf(LedgerOpenError);
    expect((e as Error).message).toMatch(/^ledger \/data\/packbot\.db: /);
    expect((e as Error).message).toMatch(reason);
    expect((e as Error).message).toContain('(detail)');
  });

  it('passes anything else on unchanged (a bug stays a bug, exit 1)', () => {
    const bug = new TypeError('boom');
    expect(ledgerOpenError('/x.db', bug)).toBe(bug);
    const other = err('SQLITE_MISUSE');
    expect(ledgerOpenError('/x.db', other)).toBe(other);
  });
});

describe('a corrupt ledger', () => {
  const corrupt = () => {
    const dir = tempDir('packbot-corrupt-');
    writeFileSync(join(dir, 'ledger.db'), 'not a database '.repeat(100));
    return dir;
  };

  it('Ledger.open names it', () => {
    const dir = corrupt();
    expect(() => Ledger.open(join(dir, 'ledger.db'))).toThrow(
      `ledger ${join(dir, 'ledger.db')}: not a SQLite database`,
    );
  });

  it('packbot run refuses it as an input error', async () => {
    const dir = corrupt();
    const config = loadBotConfig(writeConfig(dir, { baseUrl: 'embedded' }), {});
    await expect(
      Runner.start(config, { clock: new VirtualClock(START), logDestination: new LogSink(), metricsPort: 0 }),
    ).rejects.toBeInstanceOf(LedgerOpenError);
  });

  it('packbot report exits 2 naming it, no stack trace', async () => {
    const dir = corrupt();
    const { code, stderr } = await runCli(['report', '--config', writeConfig(dir, { baseUrl: 'embedded' })]);
    expect(code).toBe(2);
    expect(stderr).toContain(`ledger ${join(dir, 'ledger.db')}: not a SQLite database`);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
