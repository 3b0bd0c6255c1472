/**
 * The purchase report's store: one row per pack opened that the report can show (spec "Purchase
 * report": purchases with amount 0 and internal accounts are excluded, so they are counted, not
 * kept), as columns of typed arrays. Other users open about 700 packs a simulated day; as objects
 * the rows cost about 80 bytes each on the heap, as columns 20 bytes off it. The report's pack
 * fields come from the pool, its user ids from a table of the few ids that open packs.
 */
import type { Cents } from '../core/money.js';

export interface ReportLog {
  /** Rows kept. */
  n: number;
  at: Float64Array;
  amountCents: Float64Array;
  /** Index into `users`. */
  user: Int32Array;
  /** Index into the inventory's pools. */
  pool: Int32Array;
  users: string[];
  /** Every pack opening recorded, reported or not. */
  openings: number;
}

export interface ReportRow {
  at: number;
  userId: string;
  amountCents: Cents;
  pool: number;
}

export function emptyReport(capacity = 1024): ReportLog {
  return {
    n: 0,
    at: new Float64Array(capacity),
    amountCents: new Float64Array(capacity),
    user: new Int32Array(capacity),
    pool: new Int32Array(capacity),
    users: [],
    openings: 0,
  };
}

function grow<T extends Float64Array | Int32Array>(a: T, size: number): T {
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a);
  return b;
}

/**
 * Records one row: a pack opening, or a whole order of `packs` packs (`rules.purchase_report_rows`);
 * keeps it only when the report shows it (amount > 0, not internal).
 */
export function recordOpening(
  log: ReportLog,
  row: { at: number; userId: string; amountCents: Cents; pool: number; internal: boolean; packs?: number },
): void {
  log.openings += row.packs ?? 1;
  if (!(row.amountCents > 0) || row.internal) return;
  if (log.n === log.at.length) {
    const size = Math.max(1024, log.n * 2);
    log.at = grow(log.at, size);
    log.amountCents = grow(log.amountCents, size);
    log.user = grow(log.user, size);
    log.pool = grow(log.pool, size);
  }
  let u = log.users.indexOf(row.userId);
  if (u < 0) u = log.users.push(row.userId) - 1;
  const i = log.n++;
  log.at[i] = row.at;
  log.amountCents[i] = row.amountCents;
  log.user[i] = u;
  log.pool[i] = row.pool;
}

/** The kept rows at or between `since` and `until`, in recording order. */
export function reportRows(log: ReportLog, since: number, until: number): ReportRow[] {
  const out: ReportRow[] = [];
  for (let i = 0; i < log.n; i++) {
    const at = log.at[i]!;
    if (at < since || at > until) continue;
    out.push({ at, userId: log.users[log.user[i]!]!, amountCents: log.amountCents[i]!, pool: log.pool[i]! });
  }
  return out;
}
