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
  /** Told after each outermost commit (a deferred checkpoint counts them: checkpoint.ts). */
  readonly committed?: () => void;
}

/**
 * Runs `fn` in an IMMEDIATE transaction: the write lock is taken at BEGIN, so a transaction never
 * reads under a shared lock and then fails to upgrade (SQLITE_BUSY mid-way) when another
 * connection writes. Nested, it is a savepoint of the outer one.
 */
export function immediately<T>(c: LedgerConnection, fn: () => T): T {
  const result = c.db.transaction(fn).immediate();
  if (!c.db.inTransaction) c.committed?.();
  return result;
}

/** The base of a ledger part: statements, transactions and the time of a write. */
export abstract class LedgerPart {
  protected readonly db: Database.Database;
  protected readonly stmts: Statements;
  private readonly clock: Clock;

  constructor(private readonly c: LedgerConnection) {
    this.db = c.db;
    this.stmts = c.stmts;
    this.clock = c.clock;
  }

  /** `fn` in one IMMEDIATE transaction (`immediately`). */
  protected tx<T>(fn: () => T): T {
    return immediately(this.c, fn);
  }

  protected now(at?: number): number {
    return at ?? this.clock.now();
  }
}
