/**
 * The bot's durable memory: purchase intents (written before a request leaves), orders, pulls,
 * decisions, sell-backs, listings and balance observations, in one SQLite file.
 *
 * Durability: WAL with `synchronous = FULL`, so every committed write (an intent above all) is on
 * disk before the call returns; a crash afterwards cannot lose it. Every multi-row change (an order
 * with its pulls) is one transaction: after a crash it is either all there or not at all, and the
 * intent then still reads as unresolved: sent, it is put in doubt at start-up and settled by
 * evidence, not re-sent.
 *
 * Money is integer cents, times are epoch milliseconds from the injected Clock (see docs/ledger.md).
 *
 * `Ledger` opens the file and is the one API callers use; the work is done by its parts over one
 * connection, each statement prepared once (statements.ts): intents.ts (the intent state machine
 * and booking), pull-ledger.ts (pulls, decisions, sell-backs, listings), accounts.ts (balances,
 * facts) and reads.ts (counters, dashboard and report reads).
 */
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { type Clock, WallClock } from '../core/clock.js';
import { Accounts } from './accounts.js';
import { Books } from './books.js';
import { DeferredCheckpoint, type DeferredCheckpointOptions } from './checkpoint.js';
import { Intents } from './intents.js';
import { immediately, type LedgerConnection } from './ledger-part.js';
import { migrate, SCHEMA_VERSION } from './migrations.js';
import { type ModelRows, type ModelRowsQuery, readModelRows } from './model-store.js';
import { ledgerOpenError } from './open-error.js';
import { ensurePrivateDir, ensurePrivateFile, tightenFile } from './private-files.js';
import { Holdings } from './pull-ledger.js';
import { Reads } from './reads.js';
import { prepareStatements } from './statements.js';

export type { AdjustmentRow, BalanceIdentity, Observation } from './books.js';
export { type ConfirmedOrder, NEEDS_REVIEW_REASON, type NewIntent, type Settlement } from './intents.js';
export { LedgerError } from './ledger-part.js';
export type { NewDecision, SellBackOutcome } from './pull-ledger.js';
export type { ListingHistoryRow, ReportData } from './reads.js';
export * from './types.js';

export interface LedgerOpenOptions {
  clock?: Clock;
  readonly?: boolean;
  /** Checkpoint the WAL after commits, not inside them (the runner's ledger: checkpoint.ts). */
  deferCheckpoints?: boolean | DeferredCheckpointOptions;
}

export class Ledger {
  private readonly parts: {
    intents: Intents;
    holdings: Holdings;
    accounts: Accounts;
    books: Books;
    reads: Reads;
  };
  private closed = false;
  /** The file's schema version when this is a migrated copy of an older file (read-only open). */
  private fileVersion: number | undefined;

  /** The runner's checkpoints, after commits (checkpoint.ts); SQLite's own where absent. */
  readonly checkpoints: DeferredCheckpoint | undefined;
  private readonly c: LedgerConnection;

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
    clock: Clock,
    checkpoints: DeferredCheckpoint | undefined,
  ) {
    this.checkpoints = checkpoints;
    const c: LedgerConnection = {
      db,
      stmts: prepareStatements(db),
      clock,
      committed: checkpoints && (() => checkpoints.committed()),
    };
    this.c = c;
    const holdings = new Holdings(c);
    const accounts = new Accounts(c);
    const books = new Books(c);
    const intents = new Intents(c, holdings, accounts, books);
    this.parts = { intents, holdings, accounts, books, reads: new Reads(c, intents) };
  }

  /** Opens (creating the file and its directory if needed) and migrates the ledger at `path`. */
  static open(path: string, options: LedgerOpenOptions = {}): Ledger {
    try {
      return Ledger.openUnchecked(path, options);
    } catch (e) {
      // A damaged, read-only or unreachable file is named with what is wrong (exit 2, no stack).
      throw ledgerOpenError(path, e);
    }
  }

  private static openUnchecked(path: string, options: LedgerOpenOptions): Ledger {
    const memory = path === ':memory:';
    if (!memory && !options.readonly) {
      // Private books: the directory 0700 when created, the file (and so its WAL and SHM) 0600.
      ensurePrivateDir(dirname(path));
      ensurePrivateFile(path);
      for (const side of ['-wal', '-shm']) tightenFile(`${path}${side}`);
    }
    let db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: !!options.readonly });
    let fileVersion: number | undefined;
    try {
      const version = db.pragma('user_version', { simple: true }) as number;
      if (options.readonly && version < SCHEMA_VERSION) {
        // A reader of a ledger the bot has not migrated yet (just after an upgrade) reads a copy
        // in memory brought to this schema; the file is left to the bot's next start.
        const copy = new Database(db.serialize());
        db.close();
        db = copy;
        migrate(db);
        fileVersion = version;
      }
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      // Temp b-trees and statement journals in memory: SQLite's on-disk temp files are unlinked
      // only after they are opened, so a process killed in that window leaves one in TMPDIR.
      db.pragma('temp_store = MEMORY');
      if (!options.readonly) {
        if (!memory) db.pragma('journal_mode = WAL');
        // FULL: a commit is fsynced before it returns, so an intent cannot be lost once recorded.
        db.pragma('synchronous = FULL');
        migrate(db);
      }
      const defer = options.deferCheckpoints;
      const deferred = defer !== undefined && defer !== false && !memory && !options.readonly;
      const ledger = new Ledger(
        db,
        path,
        options.clock ?? new WallClock(),
        deferred ? new DeferredCheckpoint(db, defer === true ? {} : defer) : undefined,
      );
      ledger.fileVersion = fileVersion;
      return ledger;
    } catch (e) {
      db.close();
      throw e;
    }
  }

  get isOpen(): boolean {
    return !this.closed && this.db.open;
  }

  /** Journal mode, sync level and temp store actually in force (logged at start-up; checked by tests). */
  durability(): {
    journalMode: string;
    synchronous: 'off' | 'normal' | 'full' | 'extra';
    tempStore: 'default' | 'file' | 'memory';
    /** Who checkpoints the WAL: the ledger after commits, or SQLite inside the commit that fills it. */
    checkpoints: 'deferred' | 'sqlite';
  } {
    const sync = this.db.pragma('synchronous', { simple: true }) as number;
    const names = ['off', 'normal', 'full', 'extra'] as const;
    const temp = this.db.pragma('temp_store', { simple: true }) as number;
    return {
      journalMode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: names[sync] ?? 'off',
      tempStore: (['default', 'file', 'memory'] as const)[temp] ?? 'default',
      checkpoints: this.checkpoints ? 'deferred' : 'sqlite',
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  /** The schema version the file is at (`PRAGMA user_version`; `packbot doctor`). */
  schemaVersion(): number {
    return this.fileVersion ?? (this.db.pragma('user_version', { simple: true }) as number);
  }

  /**
   * Runs `fn` as ONE transaction (one commit, one fsync): the writes it makes through this ledger
   * nest inside it, and a write that throws rolls back alone when `fn` catches it. Used to book an
   * order and decide its pulls in the same commit (src/bot/spending/executor.ts).
   */
  atomically<T>(fn: () => T): T {
    return immediately(this.c, fn);
  }

  // ---------------------------------------------------------------- intents.ts: state machine, booking

  recordIntent(...a: Parameters<Intents['recordIntent']>) {
    return this.parts.intents.recordIntent(...a);
  }

  getIntent(...a: Parameters<Intents['getIntent']>) {
    return this.parts.intents.getIntent(...a);
  }

  markIntentSent(...a: Parameters<Intents['markIntentSent']>) {
    return this.parts.intents.markIntentSent(...a);
  }

  confirmIntent(...a: Parameters<Intents['confirmIntent']>) {
    return this.parts.intents.confirmIntent(...a);
  }

  confirmBySettlement(...a: Parameters<Intents['confirmBySettlement']>) {
    return this.parts.intents.confirmBySettlement(...a);
  }

  bookExtraCharge(...a: Parameters<Intents['bookExtraCharge']>) {
    return this.parts.intents.bookExtraCharge(...a);
  }

  adoptForeign(...a: Parameters<Intents['adoptForeign']>) {
    return this.parts.intents.adoptForeign(...a);
  }

  adoptPulls(...a: Parameters<Intents['adoptPulls']>) {
    return this.parts.intents.adoptPulls(...a);
  }

  failIntent(...a: Parameters<Intents['failIntent']>) {
    return this.parts.intents.failIntent(...a);
  }

  markInDoubt(...a: Parameters<Intents['markInDoubt']>) {
    return this.parts.intents.markInDoubt(...a);
  }

  markKeyForgotten(...a: Parameters<Intents['markKeyForgotten']>) {
    return this.parts.intents.markKeyForgotten(...a);
  }

  parkIntent(...a: Parameters<Intents['parkIntent']>) {
    return this.parts.intents.parkIntent(...a);
  }

  unresolvedIntents(...a: Parameters<Intents['unresolvedIntents']>) {
    return this.parts.intents.unresolvedIntents(...a);
  }

  intentCounts(...a: Parameters<Intents['intentCounts']>) {
    return this.parts.intents.intentCounts(...a);
  }

  unresolvedCount(...a: Parameters<Intents['unresolvedCount']>) {
    return this.parts.intents.unresolvedCount(...a);
  }

  orderForIntent(...a: Parameters<Intents['orderForIntent']>) {
    return this.parts.intents.orderForIntent(...a);
  }

  // ---------------------------------------------------------------- pull-ledger.ts

  getPull(...a: Parameters<Holdings['getPull']>) {
    return this.parts.holdings.getPull(...a);
  }

  pullsOfOrder(...a: Parameters<Holdings['pullsOfOrder']>) {
    return this.parts.holdings.pullsOfOrder(...a);
  }

  undecidedPulls(...a: Parameters<Holdings['undecidedPulls']>) {
    return this.parts.holdings.undecidedPulls(...a);
  }

  pullsAwaitingSale(...a: Parameters<Holdings['pullsAwaitingSale']>) {
    return this.parts.holdings.pullsAwaitingSale(...a);
  }

  pullsAwaitingListing(...a: Parameters<Holdings['pullsAwaitingListing']>) {
    return this.parts.holdings.pullsAwaitingListing(...a);
  }

  holdings(...a: Parameters<Holdings['holdings']>) {
    return this.parts.holdings.holdings(...a);
  }

  cardHoldings(...a: Parameters<Holdings['cardHoldings']>) {
    return this.parts.holdings.cardHoldings(...a);
  }

  ownedValues(...a: Parameters<Holdings['ownedValues']>) {
    return this.parts.holdings.ownedValues(...a);
  }

  hasPull(...a: Parameters<Holdings['hasPull']>) {
    return this.parts.holdings.hasPull(...a);
  }

  recordDecision(...a: Parameters<Holdings['recordDecision']>) {
    return this.parts.holdings.recordDecision(...a);
  }

  recordDecisions(...a: Parameters<Holdings['recordDecisions']>) {
    return this.parts.holdings.recordDecisions(...a);
  }

  decisionsFor(...a: Parameters<Holdings['decisionsFor']>) {
    return this.parts.holdings.decisionsFor(...a);
  }

  markPullGone(...a: Parameters<Holdings['markPullGone']>) {
    return this.parts.holdings.markPullGone(...a);
  }

  recordSellBack(...a: Parameters<Holdings['recordSellBack']>) {
    return this.parts.holdings.recordSellBack(...a);
  }

  saleOf(...a: Parameters<Holdings['saleOf']>) {
    return this.parts.holdings.saleOf(...a);
  }

  ownedPullByCard(...a: Parameters<Holdings['ownedPullByCard']>) {
    return this.parts.holdings.ownedPullByCard(...a);
  }

  setSellPullId(...a: Parameters<Holdings['setSellPullId']>) {
    return this.parts.holdings.setSellPullId(...a);
  }

  recordListing(...a: Parameters<Holdings['recordListing']>) {
    return this.parts.holdings.recordListing(...a);
  }

  recordListingUpdate(...a: Parameters<Holdings['recordListingUpdate']>) {
    return this.parts.holdings.recordListingUpdate(...a);
  }

  recordListingFill(...a: Parameters<Holdings['recordListingFill']>) {
    return this.parts.holdings.recordListingFill(...a);
  }

  getListing(...a: Parameters<Holdings['getListing']>) {
    return this.parts.holdings.getListing(...a);
  }

  activeListings(...a: Parameters<Holdings['activeListings']>) {
    return this.parts.holdings.activeListings(...a);
  }

  unwantedListings(...a: Parameters<Holdings['unwantedListings']>) {
    return this.parts.holdings.unwantedListings(...a);
  }

  activeListingForCard(...a: Parameters<Holdings['activeListingForCard']>) {
    return this.parts.holdings.activeListingForCard(...a);
  }

  // ---------------------------------------------------------------- accounts.ts: balances, facts

  recordBalance(...a: Parameters<Accounts['recordBalance']>) {
    return this.parts.accounts.recordBalance(...a);
  }

  latestBalance(...a: Parameters<Accounts['latestBalance']>) {
    return this.parts.accounts.latestBalance(...a);
  }

  expectedBalance(...a: Parameters<Accounts['expectedBalance']>) {
    return this.parts.accounts.expectedBalance(...a);
  }

  /** A balance the service reported, compared with the books and recorded (books.ts). */
  observeBalance(...a: Parameters<Books['observe']>) {
    return this.parts.books.observe(...a);
  }

  balanceQuietSince(...a: Parameters<Books['quietSince']>) {
    return this.parts.books.quietSince(...a);
  }

  listingProceedsCents(...a: Parameters<Books['proceedsCents']>) {
    return this.parts.books.proceedsCents(...a);
  }

  creditFoundSales(...a: Parameters<Books['creditFound']>) {
    return this.parts.books.creditFound(...a);
  }

  listingFeeRate(...a: Parameters<Books['feeRate']>) {
    return this.parts.books.feeRate(...a);
  }

  listingFeeTotals(...a: Parameters<Books['feeTotals']>) {
    return this.parts.books.feeTotals(...a);
  }

  adjustments(...a: Parameters<Books['adjustments']>) {
    return this.parts.books.adjustments(...a);
  }

  balanceIdentity(...a: Parameters<Books['identity']>) {
    return this.parts.books.identity(...a);
  }

  accountFact(...a: Parameters<Accounts['accountFact']>) {
    return this.parts.accounts.accountFact(...a);
  }

  setAccountFact(...a: Parameters<Accounts['setAccountFact']>) {
    return this.parts.accounts.setAccountFact(...a);
  }

  // ---------------------------------------------------------------- reads.ts: dashboard, report

  recentIntents(...a: Parameters<Reads['recentIntents']>) {
    return this.parts.reads.recentIntents(...a);
  }

  ordersBetween(...a: Parameters<Reads['ordersBetween']>) {
    return this.parts.reads.ordersBetween(...a);
  }

  chargesAfter(...a: Parameters<Reads['chargesAfter']>) {
    return this.parts.reads.chargesAfter(...a);
  }

  payoutsCounted(...a: Parameters<Reads['payoutsCounted']>) {
    return this.parts.reads.payoutsCounted(...a);
  }

  packsOrderedSince(...a: Parameters<Reads['packsOrderedSince']>) {
    return this.parts.reads.packsOrderedSince(...a);
  }

  cardsOrderedSince(...a: Parameters<Reads['cardsOrderedSince']>) {
    return this.parts.reads.cardsOrderedSince(...a);
  }

  holdingCategories(...a: Parameters<Reads['holdingCategories']>) {
    return this.parts.reads.holdingCategories(...a);
  }

  cardsHeldForReview(...a: Parameters<Reads['cardsHeldForReview']>) {
    return this.parts.reads.cardsHeldForReview(...a);
  }

  recentPulls(...a: Parameters<Reads['recentPulls']>) {
    return this.parts.reads.recentPulls(...a);
  }

  balanceHistory(...a: Parameters<Reads['balanceHistory']>) {
    return this.parts.reads.balanceHistory(...a);
  }

  cashFlows(...a: Parameters<Reads['cashFlows']>) {
    return this.parts.reads.cashFlows(...a);
  }

  listingHistories(...a: Parameters<Reads['listingHistories']>) {
    return this.parts.reads.listingHistories(...a);
  }

  listingOfPull(...a: Parameters<Reads['listingOfPull']>) {
    return this.parts.reads.listingOfPull(...a);
  }

  intentOfOrder(...a: Parameters<Reads['intentOfOrder']>) {
    return this.parts.reads.intentOfOrder(...a);
  }

  intentsUpdatedSince(...a: Parameters<Reads['intentsUpdatedSince']>) {
    return this.parts.reads.intentsUpdatedSince(...a);
  }

  latestActivityAt(...a: Parameters<Reads['latestActivityAt']>) {
    return this.parts.reads.latestActivityAt(...a);
  }

  reportData(...a: Parameters<Reads['reportData']>) {
    return this.parts.reads.reportData(...a);
  }

  /** Orders with the model's promise and what their pulls did since (model-store.ts). */
  modelRows(q: ModelRowsQuery = {}): ModelRows {
    return readModelRows(this.db, q);
  }
}
