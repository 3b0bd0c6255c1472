/**
 * The runner's WAL checkpoint, after commits rather than inside them (src/store/checkpoint.ts):
 * commits no longer copy the WAL into the database file; the ledger does, once every N outermost
 * commits, when its schedule runs; SQLite's own mark stays as a backstop.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { BACKSTOP_AUTOCHECKPOINT_PAGES, DeferredCheckpoint } from '../../src/store/checkpoint.js';
import { Ledger } from '../../src/store/ledger.js';
import { immediately, type LedgerConnection } from '../../src/store/ledger-part.js';
import type { Statements } from '../../src/store/statements.js';

const PAGE = 4096;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'packbot-checkpoint-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function walDb(name: string): { db: Database.Database; file: string } {
  const file = join(dir, name);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)');
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { db, file };
}

const connection = (db: Database.Database, committed?: () => void): LedgerConnection => ({
  db,
  stmts: {} as Statements,
  clock: new VirtualClock(0),
  committed,
});

/** One commit of `pages` pages of new rows. */
function commit(db: Database.Database, pages: number, committed?: () => void): void {
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  immediately(connection(db, committed), () => {
    for (let i = 0; i < pages; i++) insert.run(Buffer.alloc(PAGE - 200, i & 0xff));
  });
}

/** A schedule the test runs by hand. */
function manual() {
  const queue: (() => void)[] = [];
  return {
    schedule: (run: () => void) => queue.push(run),
    get queued() {
      return queue.length;
    },
    runAll: () => {
      for (const run of queue.splice(0)) run();
    },
  };
}

const fileSize = (file: string) => statSync(file).size;

describe('DeferredCheckpoint', () => {
  it('takes the copy out of the commits: past SQLite’s 1,000-page mark they copy nothing', () => {
    // Without it, SQLite's autocheckpoint copies the WAL inside the commit that crosses the mark.
    const plain = walDb('plain.db');
    const before = fileSize(plain.file);
    for (let i = 0; i < 12; i++) commit(plain.db, 100);
    expect(fileSize(plain.file)).toBeGreaterThan(before + 500 * PAGE);
    plain.db.close();

    const { db, file } = walDb('deferred.db');
    const later = manual();
    const checkpoint = new DeferredCheckpoint(db, { every: 1_000_000, schedule: later.schedule });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_AUTOCHECKPOINT_PAGES);
    const start = fileSize(file);
    for (let i = 0; i < 12; i++) commit(db, 100, () => checkpoint.committed());
    expect(fileSize(file)).toBe(start);
    expect(later.queued).toBe(0);
    db.close();
  });

  it('schedules one checkpoint every N outermost commits, which copies the WAL when it runs', () => {
    const { db, file } = walDb('every.db');
    const later = manual();
    const checkpoint = new DeferredCheckpoint(db, { every: 4, schedule: later.schedule });
    const start = fileSize(file);
    for (let i = 0; i < 3; i++) commit(db, 20, () => checkpoint.committed());
    expect(later.queued).toBe(0);
    commit(db, 20, () => checkpoint.committed());
    expect(later.queued).toBe(1);
    // Not inside the commit: the file has not grown until the scheduled run.
    expect(fileSize(file)).toBe(start);
    // Due again while one waits: still one.
    for (let i = 0; i < 8; i++) commit(db, 1, () => checkpoint.committed());
    expect(later.queued).toBe(1);
    later.runAll();
    expect(checkpoint.counts).toEqual({ runs: 1, failed: 0 });
    expect(fileSize(file)).toBeGreaterThanOrEqual(start + 88 * PAGE);
    // The count starts again from the run.
    for (let i = 0; i < 3; i++) commit(db, 1, () => checkpoint.committed());
    expect(later.queued).toBe(0);
    commit(db, 1, () => checkpoint.committed());
    expect(later.queued).toBe(1);
    db.close();
    // A run after the ledger closed does nothing.
    later.runAll();
    expect(checkpoint.counts.runs).toBe(1);
  });

  it('counts outermost commits only: nested transactions are savepoints', () => {
    const { db } = walDb('nested.db');
    const told = vi.fn();
    const c = connection(db, told);
    immediately(c, () => immediately(c, () => immediately(c, () => db.exec('INSERT INTO t (v) VALUES (1)'))));
    expect(told).toHaveBeenCalledTimes(1);
    expect(() =>
      immediately(c, () => {
        db.exec('INSERT INTO t (v) VALUES (2)');
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(told).toHaveBeenCalledTimes(1);
    db.close();
  });

  it('refuses a count that is not a positive integer', () => {
    const { db } = walDb('bad.db');
    for (const every of [0, -1, 1.5, Number.NaN]) {
      expect(() => new DeferredCheckpoint(db, { every })).toThrow(RangeError);
    }
    db.close();
  });
});

describe('Ledger with deferred checkpoints', () => {
  it('is what the runner opens: reported by durability(), SQLite’s own elsewhere', () => {
    const path = join(dir, 'bot.db');
    const deferred = Ledger.open(path, { deferCheckpoints: true });
    expect(deferred.durability()).toMatchObject({ synchronous: 'full', checkpoints: 'deferred' });
    deferred.recordIntent({ key: 'intent-key-1', account: 'main', operation: 'pack', body: { n: 1 } });
    deferred.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const plain = Ledger.open(path);
    expect(plain.durability().checkpoints).toBe('sqlite');
    expect(plain.unresolvedIntents().map((i) => i.key)).toEqual(['intent-key-1']);
    plain.close();
    const memory = Ledger.open(':memory:', { deferCheckpoints: true });
    expect(memory.durability().checkpoints).toBe('sqlite');
    memory.close();
  });

  it('counts the ledger’s own transactions', () => {
    const later = manual();
    const ledger = Ledger.open(join(dir, 'count.db'), {
      deferCheckpoints: { every: 3, schedule: later.schedule },
    });
    for (let i = 0; i < 3; i++) {
      ledger.recordIntent({ key: `intent-key-${i}`, account: 'main', operation: 'pack', body: { n: i } });
    }
    expect(later.queued).toBe(1);
    later.runAll();
    expect(ledger.checkpoints?.counts).toEqual({ runs: 1, failed: 0 });
    ledger.close();
  });
});
