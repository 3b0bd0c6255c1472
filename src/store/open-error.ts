/**
 * Why a ledger could not be opened, in words an operator can act on: the path and what is wrong
 * (not a SQLite database, damaged, read-only, no permission, no such directory). These are problems
 * with the file the config names, found before anything is done, and retrying will not fix them:
 * an input error (exit 2), with no stack trace. Anything else is passed on unchanged.
 */
import { UserInputError } from '../core/errors.js';

export class LedgerOpenError extends UserInputError {
  constructor(
    readonly ledgerPath: string,
    readonly reason: string,
  ) {
    super(`ledger ${ledgerPath}: ${reason}`);
    this.name = 'LedgerOpenError';
  }
}

const REASONS: [RegExp, string][] = [
  [
    /^SQLITE_NOTADB/,
    'not a SQLite database (damaged, or another file): restore it from a backup or move it away',
  ],
  [/^SQLITE_CORRUPT/, 'the database is damaged: restore it from a backup'],
  [
    /^SQLITE_READONLY/,
    'read-only (the file or its directory cannot be written): the bot must write its ledger',
  ],
  [/^SQLITE_CANTOPEN/, 'cannot be opened (missing directory or no permission)'],
  [/^SQLITE_(IOERR|FULL)/, 'cannot be written (I/O error or disk full)'],
  [/^(EACCES|EPERM)$/, 'no permission to create it or its directory'],
  [/^(EROFS)$/, 'on a read-only file system'],
  [/^(ENOTDIR|EEXIST)$/, 'its directory path is blocked by a file'],
];

/** The error to throw for a failure to open the ledger at `path`. */
export function ledgerOpenError(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return error;
  const found = REASONS.find(([re]) => re.test(code));
  if (!found) return error;
  const detail = error instanceof Error ? ` (${error.message})` : '';
  return new LedgerOpenError(path, `${found[1]}${detail}`);
}
