/**
 * Sharded backtests: a shard writes its per-path arrays and the report's context as a
 * `packbot.backtest-part/v1` file; `mergeParts` checks that the parts belong to one run and
 * builds the report from the merged per-path data with the same `buildReport`, so the merged
 * report is the unsharded run's, bit for bit (elapsed time apart).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BACKTEST_PART_FORMAT, BacktestPartFile } from '../../config/backtest-part.js';
import { InputFileError, loadFile } from '../../config/load.js';
import { UsageError } from '../../core/errors.js';
import { cardWidth, POOL_FIELDS, TOTALS } from '../path/path-io.js';
import { MODEL_FIELDS, MODEL_POOL_FIELDS } from '../path/path-model.js';
import { type BacktestReport, buildReport, type Collected } from '../report/backtest-report.js';
import type { BacktestOptions, BacktestRun, Shard } from './run.js';

function sha256(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

/** Parses `K/N` (1 ≤ K ≤ N). */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const index = m ? Number(m[1]) : Number.NaN;
  const count = m ? Number(m[2]) : Number.NaN;
  if (!m || count < 1 || index < 1 || index > count || count > 100_000)
    throw new UsageError(`--shard must be K/N with 1 <= K <= N (e.g. 2/8), got '${text}'`);
  return { index, count };
}

/** The part file of a shard's run. */
export function makePart(opts: BacktestOptions, run: BacktestRun): BacktestPartFile {
  const { collected: c, context, paths } = run;
  const days1 = opts.days + 1;
  const w = context.pools.length * POOL_FIELDS;
  const idx: number[] = [];
  for (let j = 0; j < paths.count; j++) {
    const i = paths.start + j * paths.step;
    if (c.done[i]) idx.push(i);
  }
  const rows = (a: Float64Array, width: number) =>
    idx.flatMap((i) => Array.from(a.subarray(i * width, (i + 1) * width)));
  return {
    format: BACKTEST_PART_FORMAT,
    shard: opts.shard ?? { index: 1, count: 1 },
    run: {
      paths: opts.paths,
      days: opts.days,
      seed: opts.seed,
      market: opts.market,
      snapshot_sha256: sha256(opts.snapshot),
      strategy_sha256: sha256(opts.strategy),
      settings_sha256: sha256({ balance: opts.balanceUsd ?? null, dynamics: opts.dynamics ?? null }),
      strategy_label: opts.strategyLabel ?? opts.strategy.name,
      snapshot_label: opts.snapshotLabel ?? opts.snapshot.source,
    },
    context,
    raw: {
      paths: idx,
      totals: rows(c.totals, TOTALS),
      equity: rows(c.equity, days1),
      pools: rows(c.pools, w),
      max_daily: idx.map((i) => c.maxDaily[i]!),
      ...(context.cards ? { cards: rows(c.cards, cardWidth(context.cards)) } : {}),
      model: rows(c.model, MODEL_FIELDS),
      model_pools: rows(c.modelPools, context.pools.length * MODEL_POOL_FIELDS),
    },
    partial: run.report.partial,
    elapsed_ms: run.report.elapsed_ms,
  };
}

/** Reads a part file: JSON.parse first (parts are large), the positioned loader when that fails. */
export function loadPart(file: string): BacktestPartFile {
  try {
    const parsed = BacktestPartFile.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // unreadable or not JSON: the loader says where
  }
  return loadFile(file, BacktestPartFile);
}

const fail = (file: string, path: string, message: string): never => {
  throw new InputFileError([{ file, line: undefined, column: undefined, path, message }]);
};

/** Merges the parts of one sharded run into its report; every inconsistency is an InputFileError. */
export function mergeParts(parts: { file: string; part: BacktestPartFile }[]): BacktestReport {
  if (parts.length === 0) throw new UsageError('merge: give the part files (packbot merge part-*.json)');
  const first = parts[0]!;
  const n = first.part.shard.count;
  const runKeys = [
    'paths',
    'days',
    'seed',
    'market',
    'snapshot_sha256',
    'strategy_sha256',
    'settings_sha256',
  ] as const;
  const byIndex = new Map<number, string>();
  for (const { file, part } of parts) {
    if (part.shard.count !== n)
      fail(file, 'shard.count', `is ${part.shard.count}, but ${first.file} is a shard of ${n}`);
    for (const k of runKeys)
      if (part.run[k] !== first.part.run[k])
        fail(
          file,
          `run.${k}`,
          `${String(part.run[k])} differs from ${first.file}'s ${String(first.part.run[k])}: not the same run`,
        );
    if (sha256(part.context) !== sha256(first.part.context))
      fail(file, 'context', `differs from ${first.file}'s: not the same run`);
    const other = byIndex.get(part.shard.index);
    if (other !== undefined) fail(file, 'shard.index', `shard ${part.shard.index}/${n} is also ${other}`);
    byIndex.set(part.shard.index, file);
    checkRaw(file, part);
  }
  const missing: number[] = [];
  for (let k = 1; k <= n; k++) if (!byIndex.has(k)) missing.push(k);
  if (missing.length > 0)
    throw new UsageError(
      `merge: missing shard${missing.length > 1 ? 's' : ''} ${missing.map((k) => `${k}/${n}`).join(', ')}`,
    );

  const ctx = first.part.context;
  const total = first.part.run.paths;
  const days1 = ctx.days + 1;
  const w = ctx.pools.length * POOL_FIELDS;
  const cw = cardWidth(ctx.cards);
  const col: Collected = {
    done: new Uint8Array(total),
    totals: new Float64Array(total * TOTALS),
    equity: new Float64Array(total * days1),
    pools: new Float64Array(total * w),
    maxDaily: new Float64Array(total),
    cards: new Float64Array(total * cw),
    model: new Float64Array(total * MODEL_FIELDS),
    modelPools: new Float64Array(total * ctx.pools.length * MODEL_POOL_FIELDS),
  };
  const mw = ctx.pools.length * MODEL_POOL_FIELDS;
  let elapsed = 0;
  let partial = false;
  for (const { part } of parts) {
    const r = part.raw;
    r.paths.forEach((i, k) => {
      col.totals.set(r.totals.slice(k * TOTALS, (k + 1) * TOTALS), i * TOTALS);
      col.equity.set(r.equity.slice(k * days1, (k + 1) * days1), i * days1);
      col.pools.set(r.pools.slice(k * w, (k + 1) * w), i * w);
      col.maxDaily[i] = r.max_daily[k]!;
      if (cw > 0) col.cards.set(r.cards!.slice(k * cw, (k + 1) * cw), i * cw);
      col.model.set(r.model.slice(k * MODEL_FIELDS, (k + 1) * MODEL_FIELDS), i * MODEL_FIELDS);
      col.modelPools.set(r.model_pools.slice(k * mw, (k + 1) * mw), i * mw);
      col.done[i] = 1;
    });
    elapsed = Math.max(elapsed, part.elapsed_ms);
    partial ||= part.partial;
  }
  let done = 0;
  for (const d of col.done) done += d;
  return buildReport({
    context: ctx,
    collected: col,
    requested: total,
    partial: partial || done < total,
    strategyLabel: first.part.run.strategy_label,
    snapshotLabel: first.part.run.snapshot_label,
    elapsedMs: elapsed,
  });
}

function checkRaw(file: string, part: BacktestPartFile): void {
  const { shard, run, raw, context } = part;
  const n = raw.paths.length;
  const sizes: [keyof typeof raw, number][] = [
    ['totals', TOTALS],
    ['equity', run.days + 1],
    ['pools', context.pools.length * POOL_FIELDS],
    ['max_daily', 1],
    ['cards', cardWidth(context.cards)],
    ['model', MODEL_FIELDS],
    ['model_pools', context.pools.length * MODEL_POOL_FIELDS],
  ];
  for (const [key, width] of sizes) {
    const got = raw[key]?.length ?? 0;
    if (got !== n * width)
      fail(file, `raw.${key}`, `has ${got} numbers, expected ${n * width} (${n} paths x ${width})`);
  }
  let last = -1;
  for (const i of raw.paths) {
    if (i <= last || i >= run.paths || i % shard.count !== shard.index - 1)
      fail(
        file,
        'raw.paths',
        `path ${i} does not belong to shard ${shard.index}/${shard.count} of ${run.paths} paths`,
      );
    last = i;
  }
  if (run.days !== context.days || run.seed !== context.seed || run.market !== context.market)
    fail(file, 'context', 'days, seed or market differ from run');
}
