/**
 * One writer per ledger. Two bots on one ledger each keep their own budget and their own view of
 * what is in flight, so they pay twice and undo each other's listings; the second must be refused
 * before it touches anything (ledger, simulator state, any file).
 *
 * The lock is `<ledger>.lock`, a tiny SQLite file held with an exclusive transaction for the life
 * of the process: an OS file lock, so the kernel releases it when the holder dies (even SIGKILL)
 * and a restart right after a crash takes it at once. A PID file could not tell a live holder from
 * a dead one whose pid was reused. Who holds it is written beside it in `<ledger>.lock.info`
 * (pid, host, start time) for the refusal message; the lock itself is the only authority.
 */
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { UserInputError } from '../core/errors.js';
import { ledgerOpenError } from './open-error.js';
import { ensurePrivateDir, ensurePrivateFile, writePrivateFileAtomic } from './private-files.js';

export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the holder took the lock. */
  since: string;
}

/** A second writer on a ledger that another process holds: exit 2, nothing touched. */
export class LedgerLockedError extends UserInputError {
  constructor(
    readonly ledgerPath: string,
    readonly holder: LockHolder | undefined,
  ) {
    const who = holder
      ? `process ${holder.pid} on ${holder.host} since ${holder.since}`
      : 'another process (holder unknown)';
    super(
      `ledger ${ledgerPath} is in use by ${who}; one bot per ledger (stop it first, or give this bot its own store.path)`,
    );
    this.name = 'LedgerLockedError';
  }
}

export interface WriterLock {
  readonly path: string;
  release(): void;
}

const lockPathOf = (ledgerPath: string): string => `${ledgerPath}.lock`;
const infoPathOf = (ledgerPath: string): string => `${ledgerPath}.lock.info`;

/** Who holds the ledger, as recorded by the holder (undefined when unknown or unreadable). */
export function readLockHolder(ledgerPath: string): LockHolder | undefined {
  try {
    const v = JSON.parse(readFileSync(infoPathOf(ledgerPath), 'utf8')) as Partial<LockHolder>;
    if (typeof v.pid === 'number' && typeof v.host === 'string' && typeof v.since === 'string')
      return { pid: v.pid, host: v.host, since: v.since };
  } catch {
    // unknown holder: the message says so
  }
  return undefined;
}

const isBusy = (e: unknown): boolean =>
  typeof (e as { code?: unknown }).code === 'string' &&
  /^SQLITE_(BUSY|LOCKED)/.test((e as { code: string }).code);

/**
 * Takes the ledger's writer lock or throws LedgerLockedError at once (no waiting). When the lock
 * is held by someone else, nothing is created or changed. An in-memory ledger needs no lock.
 */
export function acquireWriterLock(ledgerPath: string, now: () => number = Date.now): WriterLock {
  if (ledgerPath === ':memory:') return { path: ledgerPath, release: () => undefined };
  const path = lockPathOf(ledgerPath);
  const fresh = !existsSync(path);
  let db: Database.Database;
  try {
    if (fresh) {
      ensurePrivateDir(dirname(path));
      ensurePrivateFile(path);
    }
    db = new Database(path, { timeout: 0 });
  } catch (e) {
    throw ledgerOpenError(path, e);
  }
  try {
    if (fresh) db.exec('CREATE TABLE IF NOT EXISTS writer_lock (id INTEGER PRIMARY KEY)');
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('temp_store = MEMORY'); // no temp file a kill could leave behind (see ledger.ts)
    // An exclusive transaction left open: no other connection can read or write the file until
    // this process closes it or dies.
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if (isBusy(e)) throw new LedgerLockedError(ledgerPath, readLockHolder(ledgerPath));
    throw ledgerOpenError(path, e);
  }
  const holder: LockHolder = { pid: process.pid, host: hostname(), since: new Date(now()).toISOString() };
  const info = infoPathOf(ledgerPath);
  writePrivateFileAtomic(info, `${JSON.stringify(holder)}\n`);
  let released = false;
  return {
    path,
    release: () => {
      if (released) return;
      released = true;
      db.close();
    },
  };
}
