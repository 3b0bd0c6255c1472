/**
 * The soak run: the bot through N simulated days against `packbot sim --speed S` in a process of
 * its own (sim-process.ts), so what is measured is the bot alone; the simulator's own figures are
 * read beside, for information. The bot runs `packbot run`'s runner in this process on a clock
 * rebuilt from the simulator's anchor (the same time, on real timers), as a loopback `base_url`.
 *
 * Sampled every simulated hour (every N/48 days for runs shorter than two days): RSS, heap used
 * after a full GC, open handles (process.getActiveResourcesInfo), the ledger's size (pages × page
 * size; the WAL is reused, not growth), confirmed orders, missed sell-back windows, event-loop
 * delay p99 since the previous sample (perf_hooks), the simulator's RSS and cards.
 *
 * Verdict, after a warm-up (the first simulated day, a quarter of shorter runs: JIT, caches, the
 * first listings):
 * - memory: the heap's trend with its Newey–West uncertainty against HEAP_TREND_LIMIT_MB_PER_DAY
 *   (trend.ts): `flat` when growth beyond the limit is ruled out, `growing` when it is shown,
 *   `inconclusive` otherwise; RSS at the end beyond the warm-up's + max(15 %, 24 MB) is growing
 *   too (RSS also holds pages the allocator keeps, so only its level is judged);
 * - handles: at the end at most the start's + 2;
 * - ledger growth per confirmed order, reported.
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import { Runner } from '../src/bot/runner.js';
import { loadBotConfig } from '../src/config/bot-config.js';
import { repoRoot } from '../src/config/json-schemas.js';
import { type Clock, DAY_MS, HOUR_MS } from '../src/core/clock.js';
import { type SimProcess, startSimProcess, writeBotConfig } from './sim-process.js';
import { judge, type Trend, type TrendVerdict, trend } from './trend.js';

export interface SoakOptions {
  days: number;
  /** Simulated ms per wall ms (`packbot sim --speed`, at most 10 000). */
  speed: number;
  /** Keep the run's files here instead of a temp directory removed at the end. */
  dir?: string;
  /** One line per simulated day as it passes. */
  progress?: (line: string) => void;
  /**
   * A planted leak (tests of the verdict): this many MB a simulated day kept for good in the bot's
   * process, a little every simulated minute, as a cache that never evicts would.
   */
  leakMbPerDay?: number;
}

export interface Sample {
  label: string;
  /** Simulated days since the start at which the sample was due (fractional). */
  t: number;
  /** Simulated days since the start when the heap was read (a busy machine reads late). */
  at: number;
  wallSeconds: number;
  rssMb: number;
  heapUsedMb: number;
  handles: number;
  handleTypes: Record<string, number>;
  /** The ledger's committed content (page count × page size, WAL frames included). */
  ledgerKb: number;
  /** The WAL file (reused, not truncated, between checkpoints: not growth). */
  walKb: number;
  orders: number;
  windowsMissed: number;
  loopP99Ms: number;
  /** The simulator process, for information: resident memory, cards held and released. */
  simRssMb: number;
  simCards: number;
  simCardsReleased: number;
}

export interface SoakResult {
  options: SoakOptions;
  samples: Sample[];
  start: Sample;
  middle: Sample;
  end: Sample;
  logLines: { total: number; warn: number; error: number };
  verdict: {
    memory: TrendVerdict;
    handlesFlat: boolean;
    /** The heap's trend after the warm-up, MB per simulated day, with its uncertainty. */
    heapTrend: Trend | null;
    rssLevelOk: boolean;
    bytesPerOrder: number | null;
    /** Exit 0: memory shown flat and handles flat. */
    ok: boolean;
    line: string;
  };
  /** The simulator's own figures (its RSS, cards held and released per day). */
  simGrowth: string;
  gcExposed: boolean;
  /** Open handles before the bot started and once it stopped (a stopped bot leaves none behind). */
  handlesBefore: number;
  handlesAfterStop: number;
}

const MB = 1024 * 1024;

/** Growth the verdict lets pass as flat: 0.5 MB a day is 180 MB a year of running. */
const HEAP_TREND_LIMIT_MB_PER_DAY = 0.5;

/** A leak on the bot's clock: `mbPerDay` of small arrays kept for good, a share every minute. */
function plantLeak(clock: Clock, mbPerDay: number): { stop(): void } {
  const kept: number[][] = [];
  const stop = new AbortController();
  // A packed array of small integers is 8 bytes an element on the heap.
  const perMinute = Math.round((mbPerDay * MB) / (24 * 60) / 8);
  const t0 = clock.now();
  void (async () => {
    while (!stop.signal.aborted) {
      await clock.sleep(60_000, stop.signal).catch(() => undefined);
      // By the simulated minutes gone, not the wake-ups: a late timer keeps as much.
      while (kept.length < Math.floor((clock.now() - t0) / 60_000))
        kept.push(new Array<number>(perMinute).fill(kept.length));
    }
  })();
  return { stop: () => stop.abort() };
}

/** Counts log lines by level and keeps the errors. */
class LogCounter extends Writable {
  total = 0;
  warn = 0;
  error = 0;
  readonly errors: string[] = [];
  constructor(
    /** `--keep DIR`: the bot's log goes to DIR/bot.log too. */
    private readonly file?: string,
  ) {
    super();
  }
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    if (this.file) appendFileSync(this.file, chunk);
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

/** A full GC: node's own with --expose-gc, else the same function asked of V8 at run time. */
function obtainGc(): { gc: () => void; exposed: boolean } {
  const own = (globalThis as { gc?: () => void }).gc;
  if (own) return { gc: own, exposed: true };
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (() => void) | undefined;
    if (typeof gc === 'function') return { gc, exposed: true };
  } catch {
    // no GC to call: heap figures include garbage
  }
  return { gc: () => undefined, exposed: false };
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

function writeSoakConfig(dir: string, url: string): string {
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
  return writeBotConfig(dir, { url, keyEnv: 'SOAK_SIM_KEY', strategy });
}

const wallSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));
const signed = (v: number, digits = 2) => `${v >= 0 ? '+' : ''}${v.toFixed(digits)}`;

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const dir = options.dir ? resolve(options.dir) : mkdtempSync(join(tmpdir(), 'packbot-soak-'));
  mkdirSync(dir, { recursive: true });
  const root = repoRoot();
  const logs = new LogCounter(options.dir ? join(dir, 'bot.log') : undefined);
  const { gc, exposed } = obtainGc();
  const sampleMs = Math.min(HOUR_MS, (options.days * DAY_MS) / 48);
  const samplesPerDay = DAY_MS / sampleMs;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const handlesBefore = process.getActiveResourcesInfo().length;
  let sim: SimProcess | undefined;
  let runner: Runner | undefined;
  const samples: Sample[] = [];
  let leak: { stop(): void } | undefined;
  try {
    sim = await startSimProcess({
      root,
      world: join(root, 'config/sim.yaml'),
      seed: 1,
      speed: options.speed,
    });
    const config = loadBotConfig(writeSoakConfig(dir, sim.url), { SOAK_SIM_KEY: 'sk_sim_full' });
    loop.enable();
    const wall0 = performance.now();
    const bot = await Runner.start(config, { clock: sim.clock, logDestination: logs });
    runner = bot;
    const simProcess = sim;
    const t0 = bot.clock.now();
    const ledgerPath = config.store.path;

    // The simulator's figures and the ledger's size are read at whole days only: every sample
    // takes the bot's event loop for a while, and at 5000× a few ms are minutes of its day.
    let slow = { ledgerKb: 0, walKb: 0, simRssMb: Number.NaN, simCards: 0, simCardsReleased: 0 };
    const sample = async (label: string, t: number, full: boolean): Promise<Sample> => {
      gc();
      const mem = process.memoryUsage();
      const at = (bot.clock.now() - t0) / DAY_MS;
      const types: Record<string, number> = {};
      const resources = process.getActiveResourcesInfo();
      for (const r of resources) types[r] = (types[r] ?? 0) + 1;
      if (full) {
        const cards = await simProcess.cards();
        slow = {
          ledgerKb: sqliteBytes(ledgerPath) / 1024,
          walKb: fileSize(`${ledgerPath}-wal`) / 1024,
          simRssMb: simProcess.rssMb(),
          simCards: cards.held,
          simCardsReleased: cards.released,
        };
      }
      const missed = (await bot.metrics.sellbackWindowMissedTotal.get()).values.reduce(
        (a, v) => a + v.value,
        0,
      );
      const s: Sample = {
        label,
        t,
        at,
        wallSeconds: Math.round((performance.now() - wall0) / 100) / 10,
        rssMb: mem.rss / MB,
        heapUsedMb: mem.heapUsed / MB,
        handles: resources.length,
        handleTypes: types,
        ...slow,
        orders: bot.ledger.intentCounts().confirmed,
        windowsMissed: missed,
        loopP99Ms: loop.percentile(99) / 1e6,
      };
      loop.reset();
      samples.push(s);
      return s;
    };

    if (options.leakMbPerDay) leak = plantLeak(bot.clock, options.leakMbPerDay);
    await sample('start', 0, true);
    const steps = Math.round(options.days * samplesPerDay);
    for (let i = 1; i <= steps; i++) {
      const target = t0 + i * sampleMs;
      while (bot.clock.now() < target) await wallSleep((target - bot.clock.now()) / options.speed + 1);
      const t = (i * sampleMs) / DAY_MS;
      const whole = Number.isInteger(Math.round(t * 1e9) / 1e9);
      const s = await sample(
        i === steps ? 'end' : whole ? `day ${Math.round(t)}` : `t ${t.toFixed(2)}`,
        t,
        whole || i === steps || i === Math.floor(steps / 2),
      );
      if (whole || i === steps)
        options.progress?.(
          `day ${t.toFixed(t % 1 === 0 ? 0 : 2)}/${options.days}: rss ${s.rssMb.toFixed(1)} MB, heap ${s.heapUsedMb.toFixed(1)} MB, handles ${s.handles}, orders ${s.orders}, ledger ${s.ledgerKb.toFixed(0)} kB (WAL ${s.walKb.toFixed(0)} kB), missed ${s.windowsMissed}, loop p99 ${s.loopP99Ms.toFixed(1)} ms; simulator rss ${s.simRssMb.toFixed(1)} MB, ${s.simCards} cards (${s.simCardsReleased} released)`,
        );
    }
  } finally {
    leak?.stop();
    await runner?.stop('soak done');
    loop.disable();
    await sim?.stop();
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  }
  const exit = await runner!.done;
  // Sockets closed by the runner leave the handle list on the next turns of the loop; 10 s only
  // bounds a handle that never closes (a leak, reported below), however busy the machine.
  const closeBy = performance.now() + 10_000;
  while (process.getActiveResourcesInfo().length > handlesBefore && performance.now() < closeBy)
    await wallSleep(10);
  const handlesAfterStop = process.getActiveResourcesInfo().length;
  if (exit !== 0) throw new Error(`the bot stopped with exit code ${exit}: ${logs.errors.join('\n')}`);
  if (options.dir) writeFileSync(join(dir, 'samples.json'), `${JSON.stringify(samples, null, 1)}\n`);
  return verdictOf(options, samples, {
    logLines: { total: logs.total, warn: logs.warn, error: logs.error },
    gcExposed: exposed,
    handlesBefore,
    handlesAfterStop,
    samplesPerDay,
  });
}

/** The verdict of a run's samples (exported for tests of the judgement alone). */
export function verdictOf(
  options: SoakOptions,
  samples: Sample[],
  extra: Pick<SoakResult, 'logLines' | 'gcExposed' | 'handlesBefore' | 'handlesAfterStop'> & {
    samplesPerDay: number;
  },
): SoakResult {
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const middle = samples[Math.floor((samples.length - 1) / 2)]!;
  const warmup = options.days >= 2 ? 1 : options.days / 4;
  const steady = samples.filter((s) => s.t >= warmup - 1e-9);
  const base = steady[0] ?? first;
  const lag = Math.min(extra.samplesPerDay, Math.floor(steady.length / 4));
  const heapTrend = trend(
    steady.map((s) => [s.at, s.heapUsedMb] as const),
    lag,
  );
  const heap = judge(heapTrend, HEAP_TREND_LIMIT_MB_PER_DAY);
  const rssLevelOk = last.rssMb <= base.rssMb + Math.max(0.15 * base.rssMb, 24);
  const memory: TrendVerdict = !rssLevelOk || heap === 'growing' ? 'growing' : heap;
  const handlesFlat = last.handles <= first.handles + 2;
  const orders = last.orders - first.orders;
  const bytesPerOrder = orders > 0 ? Math.round(((last.ledgerKb - first.ledgerKb) * 1024) / orders) : null;
  const trendText = heapTrend
    ? `heap trend ${signed(heapTrend.slope)} MB/day, 95 % bounds [${signed(heapTrend.low)}, ${signed(heapTrend.high)}] over ${heapTrend.n} samples from ${base.label} (Newey–West, lag ${heapTrend.lag}), limit ${HEAP_TREND_LIMIT_MB_PER_DAY} MB/day`
    : 'heap trend: too few samples';
  const line =
    `verdict: memory ${memory === 'flat' ? 'flat' : memory === 'growing' ? 'GROWING' : 'INCONCLUSIVE (run longer)'} (${trendText}; heap ${base.heapUsedMb.toFixed(1)} → ${last.heapUsedMb.toFixed(1)} MB, rss ${base.rssMb.toFixed(1)} → ${last.rssMb.toFixed(1)} MB, tolerance rss +max(15%, 24 MB)), ` +
    `handles ${handlesFlat ? 'flat' : 'GROWING'} (${first.handles} → ${last.handles}; tolerance +2), ` +
    `ledger ${bytesPerOrder === null ? 'n/a' : `${bytesPerOrder} bytes per order`} (${orders} orders)`;
  return {
    options,
    samples,
    start: first,
    middle,
    end: last,
    logLines: extra.logLines,
    verdict: {
      memory,
      handlesFlat,
      heapTrend,
      rssLevelOk,
      bytesPerOrder,
      ok: memory === 'flat' && handlesFlat,
      line,
    },
    simGrowth: simGrowthLine(steady.length >= 3 ? steady : samples),
    gcExposed: extra.gcExposed,
    handlesBefore: extra.handlesBefore,
    handlesAfterStop: extra.handlesAfterStop,
  };
}

/** The simulator's own figures, for information: its RSS, cards held and released per day. */
function simGrowthLine(samples: Sample[]): string {
  const per = (f: (s: Sample) => number) =>
    trend(
      samples.map((s) => [s.t, f(s)] as const),
      0,
    )?.slope;
  const cards = per((s) => s.simCards);
  const released = per((s) => s.simCardsReleased);
  const a = samples[0]!;
  const b = samples[samples.length - 1]!;
  if (cards === undefined || released === undefined) return 'simulator (its own process): too few samples';
  return `simulator (its own process, not judged): rss ${a.simRssMb.toFixed(1)} → ${b.simRssMb.toFixed(1)} MB, ${signed(cards, 0)} cards held/day (the account's own), ${Math.round(released)} released/day (taken by simulated others, slots reused)`;
}

/** The three rows (start, middle, end) as a Markdown table. */
export function soakTable(r: SoakResult): string {
  const rows = [r.start, r.middle, r.end];
  const head =
    '| when | sim day | wall s | RSS MB | heap used MB | handles | ledger kB | orders | windows missed | loop p99 ms | sim RSS MB | sim cards (released) |';
  const sep = '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  return [
    head,
    sep,
    ...rows.map(
      (s) =>
        `| ${s.label} | ${s.t.toFixed(s.t % 1 === 0 ? 0 : 2)} | ${s.wallSeconds.toFixed(1)} | ${s.rssMb.toFixed(1)} | ${s.heapUsedMb.toFixed(1)} | ${s.handles} | ${s.ledgerKb.toFixed(0)} | ${s.orders} | ${s.windowsMissed} | ${s.loopP99Ms.toFixed(1)} | ${s.simRssMb.toFixed(1)} | ${s.simCards} (${s.simCardsReleased}) |`,
    ),
  ].join('\n');
}
