/**
 * The agreement harness's core (`npm run agreement`; docs/backtest.md, "Agreement harness"): draws
 * strategies, runs each on both worlds' snapshots through the static and the dynamic backtest (and,
 * for the first few, the bot live against a dynamic backtest of the same horizon), and judges
 * every view against what it was promised (judge.ts, views.ts). In-process, through the engine's
 * API (runBacktestPaths), never the CLI.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOTALS } from '../src/backtest/path/path-io.js';
import type { BacktestReport } from '../src/backtest/report/backtest-report.js';
import { runBacktestPaths } from '../src/backtest/run/run.js';
import { readSource } from '../src/config/load.js';
import { packageRoot } from '../src/config/package-root.js';
import { type DrawnStrategy, drawStrategies, handPicked } from './draw.js';
import {
  CHECKS_PER_LIVE,
  CHECKS_PER_ROW,
  type Comparison,
  familyZ,
  type Judged,
  judge,
  type MeanVar,
  meanVar,
} from './judge.js';
import { LIVE_CADENCE, type LiveTotals, liveRun } from './live.js';
import { type Pair, PairPool, runPair } from './pairs.js';
import { backtestComparisons, liveComparisons, type RunTotals } from './views.js';
import {
  type AgreementWorld,
  agreementWorlds,
  beliefOf,
  believes,
  SNAPSHOT_SEED,
  type WorldName,
} from './worlds.js';

export interface AgreementOptions {
  /** Random strategies drawn (the hand-picked ones come on top). */
  strategies: number;
  seed: number;
  /** Paths and days of each static and dynamic backtest. */
  paths: number;
  days: number;
  /** The first `live` random strategies also run the bot live, on both worlds. */
  live: number;
  /** Bot runs (simulator seeds) per live strategy × world, their horizon, and the backtest's paths. */
  liveRuns: number;
  liveDays: number;
  livePaths: number;
  /** Run the hand-picked cases (draw.ts, `handPicked`) before the random ones. */
  handPicked: boolean;
  /** Threads running rows' backtests (0: this thread, for tests that run the TypeScript sources). */
  workers: number;
  /** Write the strategies and snapshots here, so a failing row reruns with `packbot backtest`. */
  out?: string;
  /** Told each row as it is done, with the run's threshold. */
  onRow?: (row: Row, zStar: number) => void;
}

export const DEFAULTS = {
  strategies: 40,
  seed: 1,
  paths: 200,
  days: 10,
  live: 2,
  liveRuns: 8,
  liveDays: 1,
  livePaths: 200,
} as const;

/** A backtest's per-pack figures (USD). */
export interface PerPack {
  packsPerPath: number;
  /** The scorer's realized EV at the orders, the backtest's value per pack and its standard error. */
  scorer: number | null;
  realized: number | null;
  realizedSe: number | null;
}

export interface LiveFigures {
  runs: number;
  paths: number;
  days: number;
  bot: { packs: MeanVar; net: MeanVar };
  backtest: { packs: MeanVar; net: MeanVar };
}

export interface Row {
  id: string;
  world: WorldName;
  /** The strategy's listing life is this world's (worlds.ts, `believes`). */
  believes: boolean;
  static: PerPack | null;
  dynamic: PerPack | null;
  live: LiveFigures | null;
  checks: Judged[];
  /** Failures that are not comparisons: a run that threw, a live bot that logged errors. */
  errors: string[];
}

export interface AgreementResult {
  rows: Row[];
  strategies: DrawnStrategy[];
  worlds: AgreementWorld[];
  zStar: number;
  /** Checks z* was set for (every check the run planned). */
  checks: number;
  ok: boolean;
}

export async function runAgreement(o: AgreementOptions): Promise<AgreementResult> {
  const worlds = await agreementWorlds();
  const snapshots = worlds.map((w) => w.snapshot);
  const balanced = readSource(join(packageRoot(), 'strategies', 'balanced.yaml')).data as Record<
    string,
    unknown
  >;
  const random = drawStrategies(
    o.strategies,
    o.seed,
    snapshots,
    worlds.map((w) => beliefOf(w.world)),
  );
  const strategies = [...(o.handPicked ? handPicked(balanced) : []), ...random];
  const liveIds = new Set(random.slice(0, o.live).map((s) => s.id));
  if (o.out) writeInputs(o.out, strategies, worlds);
  // Bonferroni over every check the run plans, known before the first row so rows print as done.
  const checks =
    strategies.length * worlds.length * CHECKS_PER_ROW + liveIds.size * worlds.length * CHECKS_PER_LIVE;
  const zStar = familyZ(checks);
  const pool = o.workers > 0 ? new PairPool(o.workers) : null;
  try {
    // Every row's backtests are queued at once (the threads take them in order) while this thread
    // judges the rows in order and runs the live bots.
    const cells = strategies.flatMap((s) => worlds.map((w) => ({ s, w })));
    const pairs = cells.map(({ s, w }) => {
      const job = { id: s.id, yaml: s.yaml, world: w.name, days: o.days, paths: o.paths, seed: o.seed };
      const p = pool ? pool.run(job) : null;
      // Settled here so that a row not yet awaited never counts as an unhandled rejection.
      p?.catch(() => undefined);
      return () => p ?? runPair(job, worlds);
    });
    const rows: Row[] = [];
    for (const [k, { s, w }] of cells.entries()) {
      const row = await runRow(o, s, w, pairs[k]!, liveIds.has(s.id), zStar);
      rows.push(row);
      o.onRow?.(row, zStar);
    }
    const ok = rows.every((r) => r.errors.length === 0 && r.checks.every((c) => c.pass));
    return { rows, strategies, worlds, zStar, checks, ok };
  } finally {
    await pool?.close();
  }
}

async function runRow(
  o: AgreementOptions,
  s: DrawnStrategy,
  w: AgreementWorld,
  pair: () => Promise<Pair>,
  live: boolean,
  zStar: number,
): Promise<Row> {
  const row: Row = {
    id: s.id,
    world: w.name,
    believes: believes(s.strategy, w.world),
    static: null,
    dynamic: null,
    live: null,
    checks: [],
    errors: [],
  };
  const comparisons: Comparison[] = [];
  try {
    const { static: stat, dynamic: dyn } = await pair();
    row.static = perPack(stat);
    row.dynamic = perPack(dyn);
    comparisons.push(...backtestComparisons(stat, dyn, row.believes));
    if (live) {
      const { figures, compared, errors } = await liveRow(o, s, w);
      row.live = figures;
      comparisons.push(...compared);
      row.errors.push(...errors);
    }
  } catch (e) {
    row.errors.push(`the run threw: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  }
  row.checks = comparisons.map((c) => judge(c, zStar));
  return row;
}

function perPack(r: BacktestReport): PerPack {
  return {
    packsPerPath: r.summary.packs_opened.mean,
    scorer: r.analytic.realized_ev_per_pack,
    realized: r.analytic.backtest_value_per_pack,
    realizedSe: r.analytic.backtest_value_per_pack_stderr,
  };
}

/**
 * The bot on `liveRuns` simulator seeds against the dynamic backtest of the same snapshot,
 * dynamics and horizon, rescoring as often as the bot reads the pools.
 */
async function liveRow(
  o: AgreementOptions,
  s: DrawnStrategy,
  w: AgreementWorld,
): Promise<{ figures: LiveFigures; compared: Comparison[]; errors: string[] }> {
  const bot: LiveTotals[] = [];
  for (let k = 1; k <= o.liveRuns; k++)
    bot.push(await liveRun(w.snapshot, s.strategy, w.dynamics, liveSeed(k), o.liveDays));
  const run = await runBacktestPaths({
    snapshot: w.snapshot,
    strategy: s.strategy,
    days: o.liveDays,
    paths: o.livePaths,
    seed: o.seed,
    market: 'dynamic',
    dynamics: { ...w.dynamics, rescore_minutes: LIVE_CADENCE.poolsMs / 60_000 },
    workers: o.workers,
  });
  const t = run.collected.totals;
  const backtest: RunTotals[] = [];
  for (let i = 0; i < o.livePaths; i++)
    backtest.push({ packs: t[i * TOTALS]!, spendCents: t[i * TOTALS + 1]!, netCents: t[i * TOTALS + 5]! });
  const errors: string[] = [];
  bot.forEach((b, k) => {
    const at = `live bot, simulator seed ${liveSeed(k + 1)}`;
    for (const e of b.errors) errors.push(`${at}: ${e}`);
    if (b.failedOrders > 0) errors.push(`${at}: ${b.failedOrders} order(s) refused by the simulator`);
  });
  const packs = (xs: readonly RunTotals[]) => meanVar(xs.map((x) => x.packs));
  const net = (xs: readonly RunTotals[]) => meanVar(xs.map((x) => x.netCents / 100));
  return {
    figures: {
      runs: o.liveRuns,
      paths: o.livePaths,
      days: o.liveDays,
      bot: { packs: packs(bot), net: net(bot) },
      backtest: { packs: packs(backtest), net: net(backtest) },
    },
    compared: liveComparisons(bot, backtest),
    errors,
  };
}

/**
 * The simulator seed of live run k. Never the snapshot's own: a world built from a snapshot
 * generates its unseen cards from the simulator's seed, and at the seed the snapshot was taken
 * with it makes the very ids of the recorded cards again (a duplicate card id, at the first pool).
 */
const liveSeed = (k: number): number => SNAPSHOT_SEED + 1000 + k;

/** The strategies as YAML and the snapshots as JSON, under the names the rerun lines give. */
function writeInputs(
  dir: string,
  strategies: readonly DrawnStrategy[],
  worlds: readonly AgreementWorld[],
): void {
  mkdirSync(dir, { recursive: true });
  for (const s of strategies) writeFileSync(join(dir, `${s.id}.yaml`), s.yaml);
  for (const w of worlds)
    writeFileSync(join(dir, `snapshot-${w.name}.json`), `${JSON.stringify(w.snapshot)}\n`);
}
