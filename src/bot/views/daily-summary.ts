/**
 * The `daily_summary` notification: at each UTC midnight on the injected clock, each account's
 * report of the day that just ended (src/store/pnl.ts: cohort of the day's orders, luck included).
 * Runs only when a webhook subscribes to it.
 */

import type { Clock } from '../../core/clock.js';
import { DAY_MS, nextUtcMidnight } from '../../core/clock.js';
import type { Notifier } from '../../obs/notify/event.js';
import type { Ledger } from '../../store/ledger.js';
import { computeReport } from '../../store/pnl.js';
import { dailySummary } from '../common/notices.js';
import { sleepUntil } from '../common/sleep.js';

export interface DailySummaryOptions {
  clock: Clock;
  ledger: Ledger;
  notifier: Notifier;
  accounts: readonly string[];
  signal: AbortSignal;
}

/** Sends the summary of the UTC day starting at `dayStart` for every account. */
function sendDailySummary(o: Omit<DailySummaryOptions, 'signal'>, dayStart: number): void {
  const until = dayStart + DAY_MS - 1;
  const data = o.ledger.reportData(dayStart, until);
  const at = o.clock.now();
  for (const account of o.accounts) {
    const report = computeReport(data, dayStart, until, { account });
    o.notifier.notify(dailySummary(account, dayStart, report.totals, at));
  }
}

/** Until aborted: sleep to the next UTC midnight, then summarise the day before it. */
export async function dailySummaryLoop(o: DailySummaryOptions): Promise<void> {
  for (;;) {
    const midnight = nextUtcMidnight(o.clock.now());
    if (!(await sleepUntil(o.clock, midnight, o.signal))) return;
    if (!o.ledger.isOpen) return;
    sendDailySummary(o, midnight - DAY_MS);
  }
}
