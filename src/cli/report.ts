import { dirname, resolve } from 'node:path';
import { type BooksJson, booksOf } from '../bot/selling/cash-books.js';
import { BotConfigFile } from '../config/bot-config.js';
import { loadFile } from '../config/load.js';
import { loadStrategy } from '../config/strategy-file.js';
import { WallClock } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import { formatUsd } from '../core/money.js';
import { textTable } from '../core/text-table.js';
import { Ledger } from '../store/ledger.js';
import { ledgerModel } from '../store/model-orders.js';
import { inDoubtFirst, isParked } from '../store/order-facts.js';
import { computeReport, type PnlReport, type ReportGroup, type ReportTotals } from '../store/pnl.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import { ledgerPathOf } from './ledger-of.js';
import { renderModel } from './model-table.js';

const USAGE = `packbot report [--config F] [--since T] [--until T] [--account NAME] [--json] [--dry-run]

  --dry-run    the paper trades of \`packbot run --dry-run\` (their own ledger); default: the live books`;

/** `2026-01-05` (UTC midnight; as --until: the end of that day) or an ISO 8601 time with offset. */
export function parseTime(value: string, flag: 'since' | 'until'): number {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const full = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(value);
  const ms = dateOnly ? Date.parse(`${value}T00:00:00Z`) : full ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms) || (dateOnly && new Date(ms).toISOString().slice(0, 10) !== value))
    throw new UsageError(
      `--${flag} must be a date (2026-01-05) or an ISO 8601 time with offset (2026-01-05T12:00:00Z), got '${value}'`,
    );
  return dateOnly && flag === 'until' ? ms + 86_400_000 - 1 : ms;
}

const COLUMNS: [string, (t: ReportTotals) => string][] = [
  ['orders', (t) => String(t.orders)],
  ['packs', (t) => String(t.packsOpened)],
  ['spend', (t) => formatUsd(t.spendCents)],
  ['sell-backs', (t) => formatUsd(t.sellbackPayoutCents)],
  ['listings', (t) => formatUsd(t.listingProceedsCents)],
  ['holdings', (t) => `${t.holdings} / ${formatUsd(t.holdingsSellbackCents)}`],
  ['net P&L', (t) => formatUsd(t.netCents)],
  ['expected', (t) => formatUsd(t.expectedValueCents)],
  ['realized', (t) => formatUsd(t.realizedValueCents)],
  ['luck', (t) => (t.luckSigma === null ? '-' : `${t.luckSigma >= 0 ? '+' : ''}${t.luckSigma.toFixed(2)}σ`)],
];

function table(title: string, rows: ReportGroup[]): string {
  return grid(
    [title, ...COLUMNS.map(([h]) => h)],
    rows.map((r) => [r.key, ...COLUMNS.map(([, f]) => f(r))]),
  );
}

/** A text table: the first column left-aligned, the figures right-aligned. */
function grid(head: string[], body: string[][]): string {
  return textTable(head, body, { right: head.map((_, i) => i > 0), rule: true }).join('\n');
}

/** The card purchases of the window, as one table row (spend = prices + fees). */
function cardLines(r: PnlReport): string[] {
  const c = r.cards;
  if (!c) return [];
  const head = [
    'card purchases',
    'cards',
    'prices',
    'fees',
    'spend',
    'sell-backs',
    'listings',
    'holdings',
    'net P&L',
  ];
  const row = [
    'all',
    String(c.orders),
    formatUsd(c.pricesCents),
    formatUsd(c.feesCents),
    formatUsd(c.spendCents),
    formatUsd(c.sellbackPayoutCents),
    formatUsd(c.listingProceedsCents),
    `${c.holdings} / ${formatUsd(c.holdingsSellbackCents)}`,
    formatUsd(c.netCents),
  ];
  return [
    grid(head, [row]),
    ...(c.needsReview > 0
      ? [`${c.needsReview} purchase(s) flagged for review: their cards are held (packbot vault)`]
      : []),
    '',
  ];
}

/** Orders whose outcome is unknown: never in the P&L until settled, always shown beside it. */
export interface InDoubtSummary {
  count: number;
  parked: number;
  keys: string[];
}

function inDoubtLines(d: InDoubtSummary): string[] {
  if (d.count === 0) return [];
  return [
    `Orders in doubt (not in the figures until settled): ${d.count}, ${d.parked} parked for review ` +
      `(packbot orders --in-doubt): ${d.keys.join(', ')}`,
    '',
  ];
}

export function renderReport(
  r: PnlReport,
  inDoubt: InDoubtSummary = { count: 0, parked: 0, keys: [] },
): string {
  const t = r.totals;
  const who = r.account === null ? '' : ` of account ${r.account}`;
  if (t.orders === 0)
    return [`No orders${who} between ${r.since} and ${r.until}.`, '', ...inDoubtLines(inDoubt)]
      .join('\n')
      .replace(/\n+$/, '\n');
  return [
    ...inDoubtLines(inDoubt),
    `P&L for orders${who} from ${r.since} to ${r.until}`,
    '',
    table('total', [{ key: 'all', ...t }]),
    '',
    table('pack', r.byPack),
    '',
    ...cardLines(r),
    table('risk level', r.byRiskLevel),
    '',
    table('day (UTC)', r.byDay),
    '',
    'Holdings are valued at their sell-back offer at the end of the window (count / value);',
    'luck is (realized − expected pull value) in standard deviations of the orders with an expectation',
    `(${t.ordersWithExpectation} of ${t.orders}).`,
    '',
  ].join('\n');
}

/** The strategy's assumed marketplace fee, for the comparison; null when the file cannot be read. */
function assumedFeeOf(strategy: string, configPath: string): number | null {
  try {
    return loadStrategy(resolve(dirname(configPath), strategy)).sell.list.seller_fee_rate;
  } catch {
    return null;
  }
}

/** The identity the books keep: cash P&L = balance change − adjustments, and what is left over. */
function renderBooks(books: readonly BooksJson[]): string {
  if (books.length === 0) return '';
  const usd = (n: number) => `${n < 0 ? '-' : ''}$${Math.abs(n).toFixed(2)}`;
  const lines = ['Books against the balance (since the first reading):'];
  for (const b of books) {
    lines.push(
      `  ${b.account}: cash P&L ${usd(b.cash_pnl_usd)} = balance change ${usd(b.balance_change_usd)} ` +
        `(${usd(b.first_balance_usd)} → ${usd(b.balance_now_usd)}) − adjustments ${usd(b.adjustments_usd)}; ` +
        `residual ${usd(b.residual_usd)}`,
    );
    if (b.listing_fee_rate !== null)
      lines.push(
        `    marketplace fee measured ${(b.listing_fee_rate * 100).toFixed(2)}%` +
          (b.assumed_fee_rate === null
            ? ''
            : ` (strategy assumes ${(b.assumed_fee_rate * 100).toFixed(2)}%)`),
      );
    if (b.sales_awaiting_credit > 0)
      lines.push(`    ${b.sales_awaiting_credit} listing sale(s) found, their credit not yet in the balance`);
    for (const a of b.adjustments)
      lines.push(`    adjustment ${a.at} ${usd(a.amount_usd)}: ${a.reason} (${a.source})`);
  }
  return `${lines.join('\n')}\n`;
}

export const command: Command = {
  summary: 'profit and loss from the ledger',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        config: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        account: { type: 'string' },
        json: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
      },
      'report',
    );
    if (positionals.length > 0) throw new UsageError(`report: unexpected argument '${positionals[0]}'`);
    const since = values.since === undefined ? 0 : parseTime(values.since, 'since');
    const untilFlag = values.until === undefined ? undefined : parseTime(values.until, 'until');
    if (untilFlag !== undefined && since > untilFlag)
      throw new UsageError('--since must not be after --until');
    const configPath = values.config ?? 'config/bot.yaml';
    const file = loadFile(configPath, BotConfigFile);
    const names = file.accounts.map((a) => a.name);
    if (values.account !== undefined && !names.includes(values.account))
      throw new UsageError(
        `--account: '${values.account}' is not an account of ${configPath} (${names.join(', ')})`,
      );
    const ledger = Ledger.open(ledgerPathOf(file, configPath, values['dry-run'] === true));
    try {
      // Default end: now, or the ledger's last write if later (a sped-up simulator clock runs ahead).
      const until = untilFlag ?? Math.max(new WallClock().now(), ledger.latestActivityAt());
      if (since > until) throw new UsageError('--since is after the end of the ledger and now');
      const account = values.account === undefined ? {} : { account: values.account };
      const report = computeReport(ledger.reportData(since, until), since, until, account);
      // The window picks the orders; what their pulls realized is as the ledger has it now.
      const now = Math.max(new WallClock().now(), ledger.latestActivityAt());
      const model = ledgerModel(ledger, { ...account, since, until }, now);
      // The ledger alone: a running bot's request on the wire counts in doubt (order-facts.ts).
      const doubt = inDoubtFirst(ledger.unresolvedIntents(values.account));
      const inDoubt: InDoubtSummary = {
        count: doubt.length,
        parked: doubt.filter((i) => isParked(i)).length,
        keys: doubt.map((i) => i.key),
      };
      const books = file.accounts
        .filter((a) => values.account === undefined || a.name === values.account)
        .map((a) => booksOf(ledger, a.name, assumedFeeOf(a.strategy, configPath)))
        .filter((b): b is BooksJson => b !== null);
      process.stdout.write(
        values.json
          ? `${JSON.stringify({ ...report, in_doubt: inDoubt, model, books }, null, 2)}\n`
          : renderReport(report, inDoubt) +
              (report.totals.orders > 0 ? renderModel(model) : '') +
              renderBooks(books),
      );
      return 0;
    } finally {
      ledger.close();
    }
  },
};
