/**
 * No read a running bot makes scans a table that grows with the ledger's age: every statement
 * the ledger prepares is planned by SQLite (EXPLAIN QUERY PLAN), and a full scan fails the test
 * unless it is a whole-ledger read by design (a report, a listing of every order), named below.
 * Nor does one search an account's whole history: a search on the account alone, or on a bound
 * from above only (everything up to now), fails unless it is named as such a read by design,
 * and so does an `IN (SELECT …)` of every row of a status.
 * A month of trading at one order a minute is ~43k intents and ~430k pulls: a scan on the path
 * of a purchase answer or a sell pass would hold the event loop for tens of milliseconds.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { Ledger } from '../../src/store/ledger.js';
import { T0 } from './fixtures.js';

/** Whole-ledger reads by design, each with why a scan is what it should do. */
const WHOLE_LEDGER: readonly [RegExp, string][] = [
  [/FROM intents ORDER BY created_at DESC/, '`packbot orders`: every order, newest first'],
  [/SELECT state, COUNT\(\*\) AS n FROM intents GROUP BY state/, 'counts by state: the state index alone'],
  [/^SELECT at, cents FROM \(/, 'the P&L report: every cash flow of an account'],
  [/FROM listings l LEFT JOIN pulls p/, 'the listing report: every listing'],
  [/FROM adjustments ORDER BY at, id/, 'the books report: every adjustment'],
  [/FROM model_strategies$/, 'one row per strategy version ever used'],
  [/WHERE o\.created_at >= @since/, "`packbot report`'s expected vs realized over every account"],
  [/FROM listing_totals$/, "the books' fee over every account: one row per account"],
];

/** Reads of one account's whole history (or everything up to a time) by design, each with why. */
const WHOLE_HISTORY: readonly [RegExp, string][] = [
  [/FROM sellbacks WHERE at <= \? AND pull_id IN/, "`packbot report`'s sell-backs of a period's orders"],
  [/FROM adjustments WHERE account = \? ORDER BY at, id/, "the books report: an account's adjustments"],
  [/^SELECT \(SELECT COALESCE\(SUM\(amount_cents\)/, 'the books since the first reading (status, dashboard)'],
  [/FROM sellbacks WHERE account = \? AND counted = 1$/, "the budget's cash back, once at start-up"],
];

/**
 * A search bounded by the account alone, or by one upper bound: all history up to now. Not a
 * primary key's entry (one row per account, such as a running total).
 */
const UNBOUNDED_SEARCH = /^SEARCH (?!.* USING PRIMARY KEY \(\w+=\?\)$).*\((account=\?|\w+<\?)\)$/;

/**
 * A search on a status alone: bounded by what is in flight when it asks for open or pending rows,
 * but every row ever for a status that keeps them (held, sold, filled). Inside an `IN (SELECT …)`
 * it is built whole on every run of its statement, whatever the outer rows need: never there.
 */
const STATUS_SEARCH = /^SEARCH .*\((status|state)=\?\)$/;

afterEach(() => vi.restoreAllMocks());

function preparedByLedger(): { db: Database.Database; sqls: string[] } {
  const sqls = new Set<string>();
  const prepare = Database.prototype.prepare;
  vi.spyOn(Database.prototype, 'prepare').mockImplementation(function (this: Database.Database, sql: string) {
    sqls.add(sql);
    return prepare.call(this, sql);
  });
  const ledger = Ledger.open(':memory:', { clock: new VirtualClock(T0) });
  // The reads that prepare their statements when first called.
  ledger.expectedBalance('main');
  ledger.balanceQuietSince('main', T0);
  ledger.reportData(0, T0);
  ledger.modelRows({ account: 'main', strategyName: 's', decidedSince: 0 });
  ledger.modelRows({ account: 'main', strategyName: 's', decidedSince: 0, skip: [1] });
  ledger.modelRows({});
  vi.restoreAllMocks();
  return { db: (ledger as unknown as { db: Database.Database }).db, sqls: [...sqls] };
}

/** Zero for every parameter, named (`@x`) or positional (`?`). */
function zeros(sql: string): unknown[] {
  const names = [...new Set([...sql.matchAll(/@(\w+)/g)].map((m) => m[1]!))];
  if (names.length > 0) return [Object.fromEntries(names.map((n) => [n, 0]))];
  return Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 0);
}

describe('ledger query plans', () => {
  it('scans no growing table outside the named whole-ledger reads', () => {
    const { db, sqls } = preparedByLedger();
    // Writes that read (an INSERT's subquery) are planned too: they run on every booking.
    const reads = sqls.filter(
      (s) => /^\s*(SELECT|WITH|UPDATE|DELETE)/i.test(s) || /^\s*INSERT[\s\S]*\(SELECT/i.test(s),
    );
    expect(reads.length).toBeGreaterThan(60);
    const scans: string[] = [];
    for (const sql of reads) {
      const flat = sql.replace(/\s+/g, ' ').trim();
      if (WHOLE_LEDGER.some(([re]) => re.test(flat))) continue;
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...zeros(sql)) as {
        id: number;
        parent: number;
        detail: string;
      }[];
      const lists = new Set(plan.filter((p) => p.detail.startsWith('LIST SUBQUERY')).map((p) => p.id));
      // An index's first or last entry (its order, LIMIT 1) is a seek, however long the history.
      const edge = /LIMIT 1\)*$/.test(flat) && !plan.some((p) => /TEMP B-TREE/.test(p.detail));
      const history = edge || WHOLE_HISTORY.some(([re]) => re.test(flat));
      for (const { detail, parent } of plan)
        if (
          // json_each reads a list the caller passes (the model watch's settled rows), not a table.
          /^SCAN (?!CONSTANT ROW|json_each VIRTUAL TABLE)/.test(detail) ||
          (!history && UNBOUNDED_SEARCH.test(detail)) ||
          (lists.has(parent) && STATUS_SEARCH.test(detail))
        )
          scans.push(`${detail}: ${flat.slice(0, 160)}`);
    }
    expect(scans).toEqual([]);
  });

  it('every named whole-ledger or whole-history read is still prepared (the lists stay true)', () => {
    const flat = preparedByLedger().sqls.map((s) => s.replace(/\s+/g, ' ').trim());
    for (const [re, why] of [...WHOLE_LEDGER, ...WHOLE_HISTORY])
      expect(
        flat.some((s) => re.test(s)),
        why,
      ).toBe(true);
  });
});
