import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireWriterLock, LedgerLockedError, type WriterLock } from '../../src/store/writer-lock.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';

const held: WriterLock[] = [];
afterEach(() => {
  for (const l of held.splice(0)) l.release();
  removeTempDirs();
});
const BUILT = resolve(import.meta.dirname, '../../dist/src/store/writer-lock.js');
const dir = () => tempDir('packbot-lock-');

describe('writer lock', () => {
  it('refuses a second writer, naming the ledger and the holder, and changes nothing', () => {
    const ledger = join(dir(), 'data', 'packbot.db');
    held.push(acquireWriterLock(ledger, () => Date.parse('2026-01-05T10:00:00Z')));
    const before = readdirSync(join(ledger, '..')).map((f) => [f, statSync(join(ledger, '..', f)).mtimeMs]);
    let err: unknown;
    try {
      held.push(acquireWriterLock(ledger));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerLockedError);
    const msg = (err as Error).message;
    expect(msg).toContain(ledger);
    expect(msg).toContain(`process ${process.pid} on ${hostname()} since 2026-01-05T10:00:00.000Z`);
    const after = readdirSync(join(ledger, '..')).map((f) => [f, statSync(join(ledger, '..', f)).mtimeMs]);
    expect(after).toEqual(before);
    expect(existsSync(ledger)).toBe(false);
  });

  it('is free again once released', () => {
    const ledger = join(dir(), 'packbot.db');
    acquireWriterLock(ledger).release();
    held.push(acquireWriterLock(ledger));
  });

  it('an in-memory ledger needs no lock', () => {
    held.push(acquireWriterLock(':memory:'), acquireWriterLock(':memory:'));
  });

  // The built module in a child process (needs `npm run build`, like the CLI tests).
  it.skipIf(!existsSync(BUILT))('the OS releases it when the holder is SIGKILLed', async () => {
    const ledger = join(dir(), 'packbot.db');
    const mod = BUILT;
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import(${JSON.stringify(mod)}).then((m) => { m.acquireWriterLock(${JSON.stringify(ledger)}); console.log('held'); setInterval(() => {}, 1000); })`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await new Promise<void>((r, reject) => {
        child.stdout.once('data', () => r());
        child.once('exit', () => reject(new Error('the lock holder exited early')));
      });
      expect(() => acquireWriterLock(ledger)).toThrow(/process \d+ on/);
    } finally {
      // Also when the test failed: the holder never ends by itself.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
    held.push(acquireWriterLock(ledger));
  });
});
