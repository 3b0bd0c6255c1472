/**
 * The `packbot report` table of expected vs realized (the `model` block of `--json`): the whole,
 * where the gap comes from (each part), each strategy version and each pack × risk level. Pure:
 * the block in, text out.
 */
import type { FiguresJson, GapJson, ModelJson } from '../strategy/model-gap.js';

const signed = (usd: number): string => `${usd >= 0 ? '+' : ''}${usd.toFixed(2)}`;
const zText = (z: number | null): string => (z === null ? '-' : `${z >= 0 ? '+' : ''}${z.toFixed(2)}`);

const HEAD = ['packs', 'expected', 'realized', 'gap', 'se', 'z'];
const cells = (g: GapJson): string[] => [
  String(g.packs),
  signed(g.expected_net_usd),
  signed(g.realized_net_usd),
  signed(g.gap_usd),
  g.se_usd.toFixed(2),
  zText(g.z),
];

/** A text table: the first column left-aligned, the figures right-aligned. */
function grid(head: string[], body: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** The whole and its parts, as rows. */
const withParts = (label: string, f: FiguresJson): string[][] => [
  [label, ...cells(f), String(f.resolved_packs)],
  ['  sell-back', ...cells(f.parts.sell_back), ''],
  ['  listing (cards listed)', ...cells(f.parts.listing), ''],
  ['  held', ...cells(f.parts.held), ''],
];

/** The fee the balance showed against the strategies' forecast, when sales measured it. */
function feeLine(m: ModelJson): string[] {
  const f = m.listing_fee;
  if (!f || f.measured_rate === null) return [];
  const pct = (r: number) => `${(r * 100).toFixed(2)}%`;
  const assumed = f.assumed_rates.map(pct).join(', ');
  const differs = f.assumed_rates.some((r) => Math.abs(r - f.measured_rate!) > 0.005);
  return [
    `  listing fee: the marketplace kept ${pct(f.measured_rate)} of ${f.sales} sale(s); the strategy assumes ${assumed || 'n/a'}` +
      (differs ? ' (the listing part prices the assumed fee: set sell.list.seller_fee_rate)' : ''),
  ];
}

export function renderModel(m: ModelJson): string {
  if (m.orders === 0)
    return `Expected vs realized: no order in the window carries the model's promise${
      m.excluded_orders > 0 ? ` (${m.excluded_orders} left out: docs/model-drift.md)` : ''
    }.\n`;
  return [
    'Expected vs realized (net USD: each order against the row it was opened on; open pulls marked by',
    "the model; the listing part against the listing model's promise for the cards listed):",
    '',
    grid(['model', ...HEAD, 'resolved'], withParts('all', m)),
    ...feeLine(m),
    '',
    grid(
      ['strategy (version)', ...HEAD, 'resolved'],
      m.by_strategy.flatMap((s) => withParts(`${s.strategy} (${s.version})`, s)),
    ),
    '',
    grid(
      ['pack / risk level', ...HEAD, 'resolved'],
      m.by_pack.map((p) => [
        `${p.category}/${p.pack_type} ${p.risk_level}`,
        ...cells(p),
        String(p.resolved_packs),
      ]),
    ),
    '',
    `z = gap / se; |z| > 3 over 30 resolved packs is a drift (alert PackbotModelDrift). ` +
      `Open pulls at their sell-back offer instead: gap ${signed(m.at_sell_back.gap_usd)}, z ${zText(m.at_sell_back.z)}; ` +
      `the ${m.resolved.orders} order(s) resolved in full only: gap ${signed(m.resolved.gap_usd)}, z ${zText(m.resolved.z)}.` +
      (m.excluded_orders > 0 ? ` ${m.excluded_orders} order(s) left out.` : ''),
    '',
  ].join('\n');
}
