/**
 * A search spread over processes or pods, one batch (a look of the race, a rung of halving, the
 * out-of-sample check) at a time. A rung file (`packbot.optimize-rung/v1`) holds the decision
 * machine's state with its pending batch; shard K of N runs its share of the batch's
 * (candidate, path) pairs, taken in a fixed order (candidates by id, then paths) and cut in N
 * contiguous slices (so each shard builds the engines of few candidates), and writes a part
 * (`packbot.optimize-part/v1`); the merge checks the parts belong to that rung and cover it once,
 * stores them in the machine and lets it decide, which gives the next rung file or, after the
 * out-of-sample check, the result. The machine reads results by (candidate, path), so the result
 * is the in-process search's, whatever the shards.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { InputFileError } from '../../config/load.js';
import { UsageError } from '../../core/errors.js';
import type { Shard } from '../run/run.js';
import type { PathJob } from './engine-cache.js';
import type { MachineState, SearchBatch, SearchMachine } from './machine.js';

const RUNG_FORMAT = 'packbot.optimize-rung/v1';
const PART_FORMAT = 'packbot.optimize-part/v1';

const Sha = z.string().regex(/^[0-9a-f]{64}$/);
const Count = z.number().int().nonnegative();
const Figures = z.strictObject({
  paths: Count,
  objective: z.number(),
  objective_stderr: z.number(),
  mean_net_pnl: z.number(),
  median_net_pnl: z.number(),
  p5_net_pnl: z.number(),
  mean_log_growth: z.number(),
  p_loss: z.number(),
  p_ruin: z.number(),
  max_drawdown_p95: z.number(),
  feasible: z.boolean(),
  infeasible_reason: z.string().nullable(),
});
const Serial = z.strictObject({
  net: z.array(z.number().nullable()),
  drawdown: z.array(z.number()),
  ruined: z.array(z.number()),
});

export const RungFile = z.strictObject({
  format: z.literal(RUNG_FORMAT),
  rung: z.number().int().min(1).describe('1-based: rung-R.json holds the state before batch R'),
  search_sha256: Sha.describe("the search file's digest: every rung and part of one search share it"),
  elapsed_ms: z
    .number()
    .nonnegative()
    .describe("time spent so far: planning, each rung's slowest shard, merges"),
  state: z.strictObject({
    look: Count,
    phase: z.enum(['search', 'oos', 'done']),
    active: z.array(Count),
    metrics: z.record(z.string(), Serial),
    oos_metrics: z.record(z.string(), Serial),
    figures: z.record(z.string(), Figures),
    last_rung: z.record(z.string(), Count),
    dropped: z.record(z.string(), z.string()),
    rungs: z.array(
      z.strictObject({
        paths: Count,
        candidates: z.array(Count),
        promoted: z.array(Count),
        leader: Count.nullable(),
      }),
    ),
    winner: Count.nullable(),
    evaluated_paths: Count,
  }),
});
export type RungFile = z.output<typeof RungFile>;

export const PartFile = z.strictObject({
  format: z.literal(PART_FORMAT),
  rung: z.number().int().min(1),
  search_sha256: Sha,
  rung_sha256: Sha.describe("the rung file's digest: the batch this part is a share of"),
  shard: z
    .strictObject({ index: z.number().int().min(1), count: z.number().int().min(1) })
    .refine((s) => s.index <= s.count, { message: 'index must be between 1 and count' }),
  pairs: z
    .strictObject({ from: Count, to: Count })
    .describe("this shard's slice [from, to) of the batch's (candidate, path) pairs"),
  net: z.array(z.number()),
  drawdown: z.array(z.number()),
  ruined: z.array(z.number()),
  elapsed_ms: z.number().nonnegative(),
});
export type PartFile = z.output<typeof PartFile>;

export function sha256Text(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

export function rungFile(rung: number, searchSha: string, m: SearchMachine, elapsedMs: number): RungFile {
  return {
    format: RUNG_FORMAT,
    rung,
    search_sha256: searchSha,
    elapsed_ms: Math.round(elapsedMs),
    state: m.toState(),
  };
}

/** The batch's (candidate, path) pairs: candidates in the batch's order, then paths. */
function pairCount(b: SearchBatch): number {
  return b.cands.length * (b.to - b.from);
}

/** Shard K of N's slice [from, to) of the batch's pairs: contiguous, sizes differing by at most one. */
export function shardSlice(b: SearchBatch, shard: Shard): { from: number; to: number } {
  const n = pairCount(b);
  return {
    from: Math.floor(((shard.index - 1) * n) / shard.count),
    to: Math.floor((shard.index * n) / shard.count),
  };
}

/** The pair with index p of the batch. */
function pairAt(b: SearchBatch, p: number): { cand: number; path: number } {
  const width = b.to - b.from;
  return { cand: b.cands[Math.floor(p / width)]!, path: b.from + (p % width) };
}

/** A slice of pairs as path jobs of at most `chunk` paths (never across two candidates). */
export function sliceJobs(b: SearchBatch, slice: { from: number; to: number }, chunk: number): PathJob[] {
  const jobs: PathJob[] = [];
  let p = slice.from;
  while (p < slice.to) {
    const { cand, path } = pairAt(b, p);
    const end = Math.min(b.to, path + chunk, path + (slice.to - p));
    jobs.push({ cand, from: path, to: end });
    p += end - path;
  }
  return jobs;
}

const fail = (file: string, path: string, message: string): never => {
  throw new InputFileError([{ file, line: undefined, column: undefined, path, message }]);
};

/**
 * Stores the parts of rung `rung.rung` in the machine (restored from that rung file), after
 * checking they are its parts, one per shard, each covering exactly its slice. Returns the
 * slowest part's time (ms).
 */
export function storeParts(
  m: SearchMachine,
  rung: { file: string; data: RungFile; sha256: string },
  parts: { file: string; part: PartFile }[],
): number {
  const b = m.batch();
  if (!b) throw new UsageError(`optimize: ${rung.file}: the search is already over`);
  if (parts.length === 0) throw new UsageError(`optimize: no parts of rung ${rung.data.rung} to merge`);
  const n = parts[0]!.part.shard.count;
  const byIndex = new Map<number, string>();
  let slowest = 0;
  for (const { file, part } of parts) {
    if (part.rung !== rung.data.rung)
      fail(file, 'rung', `is ${part.rung}, not ${rung.data.rung}: a part of another rung`);
    if (part.search_sha256 !== rung.data.search_sha256)
      fail(file, 'search_sha256', `differs from ${rung.file}'s: a part of another search`);
    if (part.rung_sha256 !== rung.sha256)
      fail(
        file,
        'rung_sha256',
        `differs from ${rung.file}'s digest: a part of another state of rung ${rung.data.rung}`,
      );
    if (part.shard.count !== n)
      fail(file, 'shard.count', `is ${part.shard.count}, but ${parts[0]!.file} is a shard of ${n}`);
    const other = byIndex.get(part.shard.index);
    if (other !== undefined) fail(file, 'shard.index', `shard ${part.shard.index}/${n} is also ${other}`);
    byIndex.set(part.shard.index, file);
    const want = shardSlice(b, part.shard);
    if (part.pairs.from !== want.from || part.pairs.to !== want.to)
      fail(
        file,
        'pairs',
        `is [${part.pairs.from}, ${part.pairs.to}), shard ${part.shard.index}/${n}'s slice is [${want.from}, ${want.to})`,
      );
    const len = want.to - want.from;
    for (const k of ['net', 'drawdown', 'ruined'] as const)
      if (part[k].length !== len) fail(file, k, `has ${part[k].length} values, the slice has ${len} pairs`);
    slowest = Math.max(slowest, part.elapsed_ms);
  }
  const missing: string[] = [];
  for (let k = 1; k <= n; k++) if (!byIndex.has(k)) missing.push(`${k}/${n}`);
  if (missing.length > 0)
    throw new UsageError(
      `optimize: rung ${rung.data.rung} is missing shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
    );
  for (const { part } of parts)
    for (let k = 0; k < part.net.length; k++) {
      const { cand, path } = pairAt(b, part.pairs.from + k);
      m.store(cand, path, part.net[k]!, part.drawdown[k]!, part.ruined[k]! !== 0);
    }
  return slowest;
}

/** The machine's state as the rung file's schema gives it back. */
export function stateOf(r: RungFile): MachineState {
  return r.state;
}
