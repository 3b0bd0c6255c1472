/**
 * The books are private: the store directory packbot creates is 0700 and every file it writes
 * there (ledger, its WAL and SHM, the dry-run ledger, the writer lock, the pause file, the
 * simulator's state) and every snapshot it records is 0600, whatever the umask. SQLite gives a
 * database's WAL and SHM the database file's own mode, so creating the database 0600 first covers
 * them. Files left readable by an older packbot are tightened when they are opened again; a
 * directory that already exists is the operator's and is left alone (`packbot doctor` names it).
 */
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';

const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) 0700; an existing directory is left as it is. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Takes group and other access off an existing regular file; anything else is left alone. */
export function tightenFile(path: string): void {
  try {
    const st = statSync(path);
    if (st.isFile() && (st.mode & 0o077) !== 0) chmodSync(path, PRIVATE_FILE_MODE);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** Creates `path` empty and 0600 when missing, else tightens it (before SQLite opens it). */
export function ensurePrivateFile(path: string): void {
  if (existsSync(path)) tightenFile(path);
  else closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
}

/** Writes `data` to a 0600 temporary file beside `path`, then renames it over `path`. */
export function writePrivateFileAtomic(path: string, data: string | Uint8Array, tmp = `${path}.tmp`): void {
  writeFileSync(tmp, data, { mode: PRIVATE_FILE_MODE });
  // `mode` applies only when the file is created: a temporary file left by a crash keeps its own.
  tightenFile(tmp);
  renameSync(tmp, path);
}

/** Group or other permission bits of a file or directory (0 when private or missing). */
export function sharedBits(path: string): number {
  try {
    return statSync(path).mode & 0o077;
  } catch {
    return 0;
  }
}
