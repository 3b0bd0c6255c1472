/**
 * What every part of the ledger (intents, holdings, accounts, reads) shares: the open connection,
 * its statements prepared once, the injected clock, IMMEDIATE transactions, and the error for a
 * caller's misuse. `Ledger` (ledger.ts) builds the parts over one connection.
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import type { Statements } from './statements.js';

/** A misuse of the ledger (unknown key, reused key, illegal transition): a bug in the caller. */
export class LedgerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerError';
  }
}

/** One open ledger: its connection, its prepared statements and the clock that times its writes. */
export interface LedgerConnection {
  readonly db: Database.Database;
  readonly stmts: Statements;
  readonly clock: Clock;
}

/** The base of a ledger part: statements, transactions and the time of a write. */
export abstract class LedgerPart {
  protected readonly db: Database.Database;
  protected readonly stmts: Statements;
  private readonly clock: Clock;

  constructor(c: LedgerConnection) {
    this.db = c.db;
    this.stmts = c.stmts;
    this.clock = c.clock;
  }

  /**
   * Runs `fn` in an IMMEDIATE transaction: the write lock is taken at BEGIN, so a transaction never
   * reads under a shared lock and then fails to upgrade (SQLITE_BUSY mid-way) when another
   * connection writes.
   */
  protected tx<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  protected now(at?: number): number {
    return at ?? this.clock.now();
  }
}
