/**
 * The one layout of every terminal table (`packbot score`, `status`, `holdings`, `orders`,
 * `report`, `calibrate`, `doctor`, `optimize`, the command list of `packbot help`): cells two
 * spaces apart, each column padded to its widest cell (the head's included), left-aligned unless
 * the layout says right. Pure: cells in, lines out.
 */

export interface TableLayout {
  /** Per column: right-aligned (figures); a column not listed is left-aligned. */
  right?: readonly boolean[];
  /** A line of dashes under the head, as wide as each column. */
  rule?: boolean;
  /** A row's last cell is free text: never padded (its width matters to no column). */
  freeLast?: boolean;
  /** Whether trailing spaces are cut from each line (default true). */
  trim?: boolean;
}

/**
 * The table's lines: the head (when given), the rule (when asked), then one line per row. A row
 * may have fewer cells than the head (the missing ones count as empty for the widths).
 */
export function textTable(
  head: readonly string[] | null,
  rows: readonly (readonly string[])[],
  layout: TableLayout = {},
): string[] {
  const all = head ? [head, ...rows] : rows;
  const columns = Math.max(0, ...all.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => {
    const text = cells
      .map((c, i) => {
        if (layout.freeLast && i === cells.length - 1) return c;
        return layout.right?.[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!);
      })
      .join('  ');
    return layout.trim === false ? text : text.trimEnd();
  };
  const out = head ? [line(head)] : [];
  if (head && layout.rule) out.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) out.push(line(r));
  return out;
}
