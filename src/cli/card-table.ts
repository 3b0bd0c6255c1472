/**
 * The human view of `packbot score --cards`: one aligned row per shop card, buys first, then by
 * edge. Pure: rows in, text out.
 */
import type { CardRow } from '../strategy/card-score.js';
import { alignColumns, type Column } from './score-table.js';

const money = (x: number | null): string => (x === null ? '-' : x.toFixed(2));

const COLUMNS: Column<CardRow>[] = [
  { head: 'category', right: false, cell: (r) => r.category },
  { head: 'card', right: false, cell: (r) => r.card_id },
  { head: 'name', right: false, cell: (r) => r.name },
  {
    head: 'grade',
    right: false,
    cell: (r) => [r.grading_company, r.grading_rank].filter((x) => x !== null).join(' ') || '-',
  },
  { head: 'price', right: true, cell: (r) => money(r.price) },
  { head: 'value', right: true, cell: (r) => money(r.value) },
  { head: 'realizable', right: true, cell: (r) => money(r.realizable) },
  { head: 'edge', right: true, cell: (r) => r.edge_ratio.toFixed(3) },
  { head: 'break-even', right: true, cell: (r) => money(r.break_even_price) },
  {
    head: 'decision',
    right: false,
    cell: (r) =>
      r.decision.action === 'buy'
        ? `buy, max ${(r.decision.maxPriceCents / 100).toFixed(2)}${r.watch !== null ? ` (watchlist #${r.watch + 1})` : ''}`
        : `skip: ${r.decision.reason}`,
  },
];

/** `limit` rows at most (the shop can hold thousands of cards); how many were left out is said. */
export function renderCardTable(rows: readonly CardRow[], limit = 50): string {
  if (rows.length === 0) return 'no shop cards to score\n';
  const shown = rows.slice(0, limit);
  const out = alignColumns(COLUMNS, shown, (i) => (shown[i]!.decision.action === 'buy' ? '*' : ' '));
  const notes = ['realizable: what the exit is expected to pay; edge = realizable / (price + 1 USD fee)'];
  if (rows.length > shown.length)
    notes.push(`${rows.length - shown.length} more cards not shown (--json has all)`);
  return `${out.join('\n')}\n\n${notes.join('\n')}\n`;
}
