/**
 * The human view of `packbot score`: one aligned row per pack × risk level, best first, the best
 * open-worthy row marked. Pure: rows in, text out.
 */
import { textTable } from '../core/text-table.js';
import type { ScoreRow } from '../strategy/score.js';

const money = (x: number): string => x.toFixed(2);
const ratio = (x: number | null): string => (x === null ? '-' : x.toFixed(3));
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const growth = (x: number | null): string => (x === null ? '-' : x.toExponential(2));

export interface Column<T> {
  head: string;
  right: boolean;
  cell(r: T): string;
}

const COLUMNS: Column<ScoreRow>[] = [
  { head: 'category', right: false, cell: (r) => r.category },
  { head: 'pack', right: false, cell: (r) => r.pack_type },
  { head: 'risk', right: false, cell: (r) => r.risk_level },
  { head: 'price', right: true, cell: (r) => money(r.price) },
  { head: 'ev', right: true, cell: (r) => `${r.estimated ? '~' : ''}${money(r.ev)}` },
  { head: 'ev/price', right: true, cell: (r) => ratio(r.ev_ratio) },
  { head: 'server_ev', right: true, cell: (r) => money(r.server_expected_value) },
  { head: 'gap', right: true, cell: (r) => money(r.ev_gap) },
  { head: 'realized', right: true, cell: (r) => money(r.realized_ev) },
  { head: 'real/price', right: true, cell: (r) => ratio(r.realized_ev_ratio) },
  { head: 'stdev', right: true, cell: (r) => money(r.stdev) },
  { head: 'p_loss', right: true, cell: (r) => pct(r.p_loss) },
  { head: 'growth', right: true, cell: (r) => growth(r.growth) },
  {
    head: 'decision',
    right: false,
    cell: (r) =>
      r.decision.action === 'open' ? `open x${r.decision.quantity}` : `wait: ${r.decision.reason}`,
  },
];

/** Rows as aligned columns under their heads, each line led by its one-character mark. */
export function alignColumns<T>(
  columns: Column<T>[],
  rows: readonly T[],
  mark: (i: number) => string,
): string[] {
  const lines = textTable(
    columns.map((c) => c.head),
    rows.map((r) => columns.map((c) => c.cell(r))),
    { right: columns.map((c) => c.right), freeLast: true, trim: false },
  );
  // The head's mark is blank.
  return lines.map((l, i) => `${i === 0 ? ' ' : mark(i - 1)} ${l}`.trimEnd());
}

export function renderScoreTable(rows: readonly ScoreRow[]): string {
  if (rows.length === 0) return 'no pools to score\n';
  const out = alignColumns(COLUMNS, rows, (i) =>
    i === 0 && rows[0]!.decision.action === 'open' ? '*' : ' ',
  );
  const notes: string[] = [];
  if (rows[0]?.decision.action === 'open') notes.push('* best: the pack the strategy would open now');
  if (rows.some((r) => r.estimated))
    notes.push('~ estimated: truncated pool, unseen cards at their band midpoint');
  return `${out.join('\n')}\n${notes.length ? `\n${notes.join('\n')}\n` : ''}`;
}
