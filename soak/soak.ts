/**
 * The soak run: the bot on the embedded simulator with a sped-up clock (`sim.speed`, a ScaledClock
 * on real timers: the path `npm start` takes) through N simulated days in one process, sampled at
 * every simulated midnight: RSS, heap used after a full GC (when node runs with --expose-gc), open
 * handles (process.getActiveResourcesInfo), ledger size (file + WAL), orders, missed sell-back
 * windows, event-loop delay p99 since the previous sample (perf_hooks.monitorEventLoopDelay).
 *
 * Verdict (after a warm-up day: JIT, caches and the first listings filling the steady state):
 * - memory flat: the heap's trend (least squares over the daily samples from day 1) at most
 *   0.1 MB per simulated day, heap used at the end ≤ heap at the middle + max(10 %, 8 MB), and RSS
 *   at the end ≤ RSS at the middle + max(15 %, 24 MB) (RSS also holds freed pages the allocator
 *   keeps, so only its level is judged);
 * - handles flat: at the end ≤ at the start + 2;
 * - ledger growth per order reported (bytes per confirmed order between the first and last sample).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { embeddedStatePath } from '../src/bot/embedded.js';
import { Runner } from '../src/bot/runner.js';
import { loadBotConfig } from '../src/config/bot-config.js';
import { repoRoot } from '../src/config/json-schemas.js';
import { DAY_MS } from '../src/core/clock.js';

export interface SoakOptions {
  days: number;
  /** Simulated ms per wall ms (sim.speed, at most 10 000). */
  speed: number;
  /** Keep the run's files here instead of a temp directory removed at the end. */
  dir?: string;
  /** One line per simulated day as it passes. */
  progress?: (line: string) => void;
  /**
   * The last sample waits until the bot has confirmed this many orders (at most a minute of wall
   * time): a busy machine slows the bot, not the sped-up clock, and the run must still see it trade.
   */
  minOrders?: number;
}

export interface Sample {
  label: string;
  day: number;
  wallSeconds: number;
  rssMb: number;
  heapUsedMb: number;
  handles: number;
  handleTypes: Record<string, number>;
  /** The ledger's committed content (page count × page size, WAL frames included). */
  ledgerKb: number;
  /** The WAL file (reused, not truncated, between checkpoints: not growth). */
  walKb: number;
  /** The embedded simulator's state file (written after every order, sell-back and listing). */
  simStateKb: number;
  /**
   * Cards the embedded simulator holds, of them those gone from an account (`gone`), and the cards
   * simulated other users took that it released (their slots reused).
   */
  simCards: number;
  simCardsGone: number;
  simCardsReleased: number;
  orders: number;
  windowsMissed: number;
  loopP99Ms: number;
}

export interface SoakResult {
  options: SoakOptions;
  samples: Sample[];
  start: Sample;
  middle: Sample;
  end: Sample;
  logLines: { total: number; warn: number; error: number };
  verdict: {
    memoryFlat: boolean;
    handlesFlat: boolean;
    /** Heap trend in MB per simulated day (null with fewer than three daily samples). */
    heapSlopeMbPerDay: number | null;
    bytesPerOrder: number | null;
    line: string;
  };
  /** The embedded simulator's own figures per day (cards held and released, state file). */
  simGrowth: string;
  gcExposed: boolean;
  /** Open handles before the bot started and once it stopped (a stopped bot leaves none behind). */
  handlesBefore: number;
  handlesAfterStop: number;
}

const MB = 1024 * 1024;

/** Counts log lines by level and keeps the errors (a soak logs a lot; nothing else is kept). */
class LogCounter extends Writable {
  total = 0;
  warn = 0;
  error = 0;
  readonly errors: string[] = [];
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      this.total++;
      const level = /"level":(\d+)/.exec(line)?.[1];
      if (level === '40') this.warn++;
      if (level !== undefined && Number(level) >= 50) {
        this.error++;
        if (this.errors.length < 20) this.errors.push(line.slice(0, 300));
      }
    }
    cb();
  }
}

/** Logical size of a SQLite file read through a second, read-only connection (it sees the WAL). */
function sqliteBytes(path: string): number {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma('page_count', { simple: true }) as number;
    const size = db.pragma('page_size', { simple: true }) as number;
    return pages * size;
  } finally {
    db.close();
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function writeSoakConfig(dir: string, speed: number): string {
  const root = repoRoot();
  // Balanced, without the lifetime spend cap: it would stop opening for good after ten days.
  const strategy = join(dir, 'strategy.yaml');
  writeFileSync(
    strategy,
    readFileSync(join(root, 'strategies/balanced.yaml'), 'utf8').replace(
      /max_total_spend_usd: \d+/,
      'max_total_spend_usd: 10000000',
    ),
  );
  const path = join(dir, 'bot.yaml');
  writeFileSync(
    path,
    [
      'format: packbot.config/v1',
      'api:',
      '  base_url: embedded',
      'accounts:',
      '  - name: main',
      `    strategy: ${strategy}`,
      'store:',
      `  path: ${join(dir, 'ledger.db')}`,
      'metrics:',
      '  enabled: false',
      'log:',
      '  level: info',
      '  pretty: never',
      'sim:',
      `  world: ${join(root, 'config/sim.yaml')}`,
      '  seed: 1',
      `  speed: ${speed}`,
      'control:',
      `  kill_switch_file: ${join(dir, 'pause')}`,
      '',
    ].join('\n'),
  );
  return path;
}

/** Least-squares slope of y over x; null with fewer than three points. */
export function slope(points: readonly [number, number][]): number | null {
  if (points.length < 3) return null;
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxx === 0 ? null : points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / sxx;
}

/** Growth the verdict lets pass as flat. */
export const HEAP_SLOPE_LIMIT_MB_PER_DAY = 0.1;

const wallSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const dir = options.dir ? resolve(options.dir) : mkdtempSync(join(tmpdir(), 'packbot-soak-'));
  mkdirSync(dir, { recursive: true });
  const logs = new LogCounter();
  const config = loadBotConfig(writeSoakConfig(dir, options.speed), {}, { cwd: dir });
  const gc = (globalThis as { gc?: () => void }).gc;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const wall0 = performance.now();
  const handlesBefore = process.getActiveResourcesInfo().length;
  const runner = await Runner.start(config, { logDestination: logs });
  const ledgerPath = config.store.path;
  const t0 = runner.clock.now();
  const samples: Sample[] = [];

  const sample = async (label: string, day: number): Promise<Sample> => {
    gc?.();
    await wallSleep(0);
    gc?.();
    const mem = process.memoryUsage();
    const types: Record<string, number> = {};
    const resources = process.getActiveResourcesInfo();
    for (const t of resources) types[t] = (types[t] ?? 0) + 1;
    const dump = runner.embedded?.market.dump() as
      | { cards_by_location?: Record<string, number>; cards_released?: number }
      | undefined;
    const locs = dump?.cards_by_location;
    const s: Sample = {
      label,
      day,
      wallSeconds: Math.round((performance.now() - wall0) / 100) / 10,
      rssMb: mem.rss / MB,
      heapUsedMb: mem.heapUsed / MB,
      handles: resources.length,
      handleTypes: types,
      ledgerKb: sqliteBytes(ledgerPath) / 1024,
      walKb: fileSize(`${ledgerPath}-wal`) / 1024,
      simStateKb: fileSize(embeddedStatePath(ledgerPath)) / 1024,
      simCards: Object.values(locs ?? {}).reduce((a, n) => a + n, 0),
      simCardsGone: locs?.gone ?? 0,
      simCardsReleased: dump?.cards_released ?? 0,
      orders: runner.ledger.intentCounts().confirmed,
      windowsMissed: (await runner.metrics.sellbackWindowMissedTotal.get()).values[0]?.value ?? 0,
      loopP99Ms: loop.percentile(99) / 1e6,
    };
    loop.reset();
    samples.push(s);
    return s;
  };

  try {
    await sample('start', 0);
    for (let day = 1; day <= options.days; day++) {
      const target = t0 + day * DAY_MS;
      while (runner.clock.now() < target) await wallSleep((target - runner.clock.now()) / options.speed + 1);
      const tradedBy = performance.now() + 60_000;
      while (
        day === options.days &&
        runner.ledger.intentCounts().confirmed < (options.minOrders ?? 0) &&
        performance.now() < tradedBy
      )
        await wallSleep(50);
      const s = await sample(day === options.days ? 'end' : `day ${day}`, day);
      options.progress?.(
        `day ${day}/${options.days}: rss ${s.rssMb.toFixed(1)} MB, heap ${s.heapUsedMb.toFixed(1)} MB, handles ${s.handles}, orders ${s.orders}, ledger ${s.ledgerKb.toFixed(0)} kB (WAL ${s.walKb.toFixed(0)} kB), sim state ${s.simStateKb.toFixed(0)} kB (${s.simCards} cards, ${s.simCardsReleased} released), missed ${s.windowsMissed}, loop p99 ${s.loopP99Ms.toFixed(1)} ms`,
      );
    }
  } finally {
    await runner.stop('soak done');
    loop.disable();
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  }
  const exit = await runner.done;
  // Sockets closed by the runner leave the handle list on the next turns of the loop; 10 s only
  // bounds a handle that never closes (a leak, reported below), however busy the machine.
  const closeBy = performance.now() + 10_000;
  while (process.getActiveResourcesInfo().length > handlesBefore && performance.now() < closeBy)
    await wallSleep(10);
  const handlesAfterStop = process.getActiveResourcesInfo().length;
  if (exit !== 0) throw new Error(`the bot stopped with exit code ${exit}: ${logs.errors.join('\n')}`);

  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const middle = samples[Math.floor(options.days / 2)] ?? first;
  // Memory is compared from the middle (the first day warms up); handles from the very start.
  const base = options.days >= 2 ? middle : first;
  const heapFlat = last.heapUsedMb <= base.heapUsedMb + Math.max(0.1 * base.heapUsedMb, 8);
  const rssFlat = last.rssMb <= base.rssMb + Math.max(0.15 * base.rssMb, 24);
  const handlesFlat = last.handles <= first.handles + 2;
  const orders = last.orders - first.orders;
  const bytesPerOrder = orders > 0 ? Math.round(((last.ledgerKb - first.ledgerKb) * 1024) / orders) : null;
  const heapSlope = slope(samples.filter((x) => x.day >= 1).map((x) => [x.day, x.heapUsedMb]));
  const memoryFlat = heapFlat && rssFlat && (heapSlope === null || heapSlope <= HEAP_SLOPE_LIMIT_MB_PER_DAY);
  const trend =
    heapSlope === null ? '' : `, heap trend ${heapSlope >= 0 ? '+' : ''}${heapSlope.toFixed(2)} MB/day`;
  const line =
    `verdict: memory ${memoryFlat ? 'flat' : 'GROWING'} (heap ${base.heapUsedMb.toFixed(1)} → ${last.heapUsedMb.toFixed(1)} MB, rss ${base.rssMb.toFixed(1)} → ${last.rssMb.toFixed(1)} MB from ${base.label}${trend}; tolerance heap +max(10%, 8 MB) and trend ≤ ${HEAP_SLOPE_LIMIT_MB_PER_DAY} MB/day, rss +max(15%, 24 MB)), ` +
    `handles ${handlesFlat ? 'flat' : 'GROWING'} (${first.handles} → ${last.handles}; tolerance +2), ` +
    `ledger ${bytesPerOrder === null ? 'n/a' : `${bytesPerOrder} bytes per order`} (${orders} orders)`;
  return {
    options,
    samples,
    start: first,
    middle,
    end: last,
    logLines: { total: logs.total, warn: logs.warn, error: logs.error },
    verdict: { memoryFlat, handlesFlat, heapSlopeMbPerDay: heapSlope, bytesPerOrder, line },
    simGrowth: simGrowthLine(samples),
    gcExposed: gc !== undefined,
    handlesBefore,
    handlesAfterStop,
  };
}

/**
 * The simulator shares the process in embedded mode: the cards it holds and releases and its state
 * file per day, to tell its growth from the bot's.
 */
function simGrowthLine(samples: Sample[]): string {
  const days = samples.filter((x) => x.day >= 1);
  const cards = slope(days.map((x) => [x.day, x.simCards]));
  const released = slope(days.map((x) => [x.day, x.simCardsReleased]));
  const state = slope(days.map((x) => [x.day, x.simStateKb]));
  if (cards === null || released === null || state === null)
    return 'simulator: too few days to measure its growth';
  return `simulator: ${cards >= 0 ? '+' : ''}${Math.round(cards)} cards held/day (the account's own), ${Math.round(released)} released/day (taken by simulated others, slots reused), state file ${state >= 0 ? '+' : ''}${Math.round(state)} kB/day`;
}

/** The three rows (start, middle, end) as a Markdown table. */
export function soakTable(r: SoakResult): string {
  const rows = [r.start, r.middle, r.end];
  const head =
    '| when | sim day | wall s | RSS MB | heap used MB | handles | ledger kB | orders | windows missed | loop p99 ms | sim cards (released) | sim state kB |';
  const sep = '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  return [
    head,
    sep,
    ...rows.map(
      (s) =>
        `| ${s.label} | ${s.day} | ${s.wallSeconds.toFixed(1)} | ${s.rssMb.toFixed(1)} | ${s.heapUsedMb.toFixed(1)} | ${s.handles} | ${s.ledgerKb.toFixed(0)} | ${s.orders} | ${s.windowsMissed} | ${s.loopP99Ms.toFixed(1)} | ${s.simCards} (${s.simCardsReleased}) | ${s.simStateKb.toFixed(0)} |`,
    ),
  ].join('\n');
}
