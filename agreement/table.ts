/**
 * The harness's output: one table row per strategy × world, then a line per disagreement naming
 * the strategy, the world and the view, with the command that reruns it. Pure: rows in, text out.
 */
import { relative } from 'node:path';
import type { AgreementResult, PerPack, Row } from './harness.js';
import { FAMILY_ALPHA, type Judged, RELATIVE_FLOOR, VIEWS, type View } from './judge.js';

interface Column {
  head: string;
  width: number;
  /** Left-aligned (names) rather than right-aligned (figures). */
  left?: boolean;
  cell: (r: Row) => string;
}

const usd = (x: number | null | undefined): string => (x === null || x === undefined ? '-' : x.toFixed(2));
const signed = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;

/**
 * A check's gap in standard errors: `!` when it fails, `~` when beyond z* but within the 2% floor,
 * in parentheses when shown only (not a claim this world makes), `-` when there is nothing to judge.
 */
function zCell(c: Judged | undefined, zStar: number): string {
  if (!c || (c.unjudged !== null && c.se === 0 && c.gap === 0)) return '-';
  const text = c.z === null ? (c.gap === 0 ? '0' : 'inf') : signed(c.z);
  if (c.unjudged !== null) return `(${text})`;
  if (!c.pass) return `${text}!`;
  return c.z !== null && Math.abs(c.z) > zStar ? `${text}~` : text;
}

const perPackCells = (p: PerPack | null): [string, string] => [
  usd(p?.scorer),
  p?.realized === null || p?.realized === undefined ? '-' : `${usd(p.realized)} ± ${usd(p.realizedSe)}`,
];

function columns(zStar: number): Column[] {
  const z = (view: View) => (r: Row) =>
    zCell(
      r.checks.find((c) => c.view === view),
      zStar,
    );
  return [
    { head: 'strategy', width: 12, left: true, cell: (r) => r.id },
    { head: 'world', width: 7, left: true, cell: (r) => r.world },
    { head: 'market', width: 6, left: true, cell: (r) => (r.believes ? 'world' : 'own') },
    { head: 'packs/path', width: 10, cell: (r) => (r.dynamic ? r.dynamic.packsPerPath.toFixed(1) : '-') },
    { head: 'scorer@orders', width: 13, cell: (r) => perPackCells(r.dynamic)[0] },
    { head: 'dynamic ± se', width: 15, cell: (r) => perPackCells(r.dynamic)[1] },
    { head: 'z', width: 8, cell: z('dynamic') },
    { head: 'model z', width: 8, cell: z('model') },
    { head: 'sell-back', width: 9, cell: z('model-sell-back') },
    { head: 'listing', width: 8, cell: z('model-listing') },
    { head: 'held', width: 7, cell: z('model-held') },
    { head: 'static@orders', width: 13, cell: (r) => perPackCells(r.static)[0] },
    { head: 'static ± se', width: 15, cell: (r) => perPackCells(r.static)[1] },
    { head: 'z', width: 8, cell: z('static') },
    { head: 'model z', width: 8, cell: z('static-model') },
    { head: 'live packs', width: 10, cell: z('live-packs') },
    { head: 'live net', width: 8, cell: z('live-net') },
    { head: 'verdict', width: 7, left: true, cell: verdictCell },
  ];
}

function verdictCell(r: Row): string {
  const failed = r.checks.filter((c) => !c.pass).map((c) => c.view);
  if (r.errors.length > 0) failed.push('error' as View);
  return failed.length === 0 ? 'ok' : `FAIL ${failed.join(',')}`;
}

const line = (cols: Column[], cells: string[]) =>
  cols
    .map((c, i) => (c.left ? cells[i]!.padEnd(c.width) : cells[i]!.padStart(c.width)))
    .join('  ')
    .trimEnd();

export function tableHeader(zStar: number): string {
  const cols = columns(zStar);
  const groups =
    `${''.padEnd(12 + 2 + 7 + 2 + 6 + 2 + 10 + 2)}` +
    `${'--- dynamic backtest (its own world) ---'.padEnd(13 + 15 + 8 + 8 + 9 + 8 + 7 + 12)}  ` +
    `${'--- static backtest ---'.padEnd(13 + 15 + 8 + 8 + 6)}  ` +
    '--- bot live ---';
  return [
    groups.trimEnd(),
    line(
      cols,
      cols.map((c) => c.head),
    ),
    line(
      cols,
      cols.map((c) => '-'.repeat(c.width)),
    ),
  ].join('\n');
}

export function tableRow(row: Row, zStar: number): string {
  const cols = columns(zStar);
  return line(
    cols,
    cols.map((c) => c.cell(row)),
  );
}

/** How the figures are read, printed under the table. */
export function legend(result: Pick<AgreementResult, 'zStar' | 'checks'>): string {
  return [
    `Per pack in USD; z = gap / standard error. A check agrees when |gap| <= z* x se or |gap| <= ${RELATIVE_FLOOR * 100}% of the`,
    `figure compared with; z* = ${result.zStar.toFixed(2)}: Bonferroni over the run's ${result.checks} checks, a ${FAMILY_ALPHA * 100}% chance`,
    `that a run where every view agrees fails anyway. "!" fails, "~" beyond z* but within ${RELATIVE_FLOOR * 100}%, "(…)" shown only`,
    `(a strategy priced on another market than this world's, fewer than 30 packs, or over 1% of the pulls`,
    `still open at the end where the figure cannot mark them), "-" nothing to judge.`,
  ].join('\n');
}

/** One line per failed check or error, with the command that reruns the row. */
export function failureLines(result: AgreementResult, out: string | undefined, o: RerunOptions): string[] {
  const lines: string[] = [];
  for (const r of result.rows) {
    const failed = r.checks.filter((c) => !c.pass);
    if (failed.length === 0 && r.errors.length === 0) continue;
    for (const c of failed) lines.push(`FAIL ${r.id} (${r.world} world): ${describe(c, r)}`);
    for (const e of r.errors) lines.push(`FAIL ${r.id} (${r.world} world): ${e}`);
    lines.push(`  rerun: ${rerun(r, result, out, o)}`);
  }
  return lines;
}

function describe(c: Judged, r: Row): string {
  const z = c.z === null ? 'no standard error' : `${signed(c.z)} se`;
  const figures = (p: PerPack | null) =>
    p ? ` (scorer ${usd(p.scorer)} at the orders, backtest ${usd(p.realized)} ± ${usd(p.realizedSe)})` : '';
  const detail = c.view === 'dynamic' ? figures(r.dynamic) : c.view === 'static' ? figures(r.static) : '';
  return `${VIEWS[c.view]}: gap ${c.gap >= 0 ? '+' : ''}${c.gap.toFixed(2)} = ${z}, beyond z* and ${RELATIVE_FLOOR * 100}% (${c.floor.toFixed(2)})${detail}`;
}

export interface RerunOptions {
  days: number;
  paths: number;
  seed: number;
}

function rerun(r: Row, result: AgreementResult, out: string | undefined, o: RerunOptions): string {
  const world = result.worlds.find((w) => w.name === r.world)!;
  const dir = out ?? 'DIR';
  const market = r.checks.some((c) => !c.pass && (c.view === 'static' || c.view === 'static-model'))
    ? '--market static'
    : `--market dynamic --dynamics ${relative(process.cwd(), world.file) || world.file}`;
  const cmd =
    `packbot backtest --snapshot ${dir}/snapshot-${r.world}.json --strategy ${dir}/${r.id}.yaml ` +
    `${market} --days ${o.days} --paths ${o.paths} --seed ${o.seed}`;
  return out ? cmd : `${cmd}   (write the files with --out DIR)`;
}
