/**
 * The steps of a sharded `packbot optimize` (src/backtest/optimize/sharded.ts), each one process:
 * - `--plan DIR`: copies the inputs under DIR/in, writes DIR/search.json (settings, labels, the
 *   inputs' digests) and DIR/rung-1.json (the first batch);
 * - `--dir DIR --rung R --shard K/N`: runs shard K's slice of rung R's batch on `--workers`
 *   threads, writes DIR/rung-R/part-K.json;
 * - `--dir DIR --merge-rung R`: merges rung R's parts and decides; writes DIR/rung-(R+1).json and
 *   prints `next: rung R+1 …`, or after the out-of-sample check writes the outputs as the
 *   unsharded search does (`--out`, `--json`, `--html`) and prints its table.
 * Every step reads the inputs from DIR, checked against their digests, so a pod needs only DIR.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { z } from 'zod';
import { SearchMachine } from '../backtest/optimize/machine.js';
import { EvalPool, type PathJobResult } from '../backtest/optimize/pool.js';
import { buildResult, type OptimizeResult } from '../backtest/optimize/result.js';
import { type SearchInput, setupSearch } from '../backtest/optimize/setup.js';
import {
  PartFile,
  RungFile,
  rungFile,
  sha256Text,
  shardSlice,
  sliceJobs,
  stateOf,
  storeParts,
} from '../backtest/optimize/sharded.js';
import { TOTALS } from '../backtest/path/path-io.js';
import type { Shard } from '../backtest/run/run.js';
import { loadSnapshot } from '../backtest/snapshot/load.js';
import { InputFileError, loadFile } from '../config/load.js';
import { SpaceFile } from '../config/space-file.js';
import { loadStrategy } from '../config/strategy-file.js';
import { UsageError } from '../core/errors.js';
import { writeAtomic } from './backtest.js';
import { loadDynamics } from './backtest-flags.js';

const SEARCH_FORMAT = 'packbot.optimize-search/v1';
const CHUNK = 25;

const Input = z.strictObject({ file: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) });
const SearchFile = z.strictObject({
  format: z.literal(SEARCH_FORMAT),
  settings: z.strictObject({
    trials: z.number().int().min(1),
    paths: z.number().int().min(2),
    oos: z.number().int().min(1),
    days: z.number().int().min(1),
    seed: z.number().int().nonnegative(),
    market: z.enum(['static', 'dynamic']),
    balance_usd: z.number().nullable(),
    method: z.enum(['race', 'halving']),
    race: z.strictObject({ alpha: z.number(), first: z.number().int(), growth: z.number() }),
    eta: z.number(),
    finalists: z.number().int(),
  }),
  labels: z.strictObject({ strategy: z.string(), snapshot: z.string(), space: z.string() }),
  inputs: z.strictObject({ snapshot: Input, strategy: Input, space: Input, dynamics: Input.nullable() }),
});
type SearchFile = z.output<typeof SearchFile>;

export interface PlanFiles {
  snapshot: string;
  strategy: string;
  space: string;
  dynamics?: string;
}

/** A JSON file read fast, or through the positioned loader when it does not fit (file:line:field). */
function loadJson<S extends z.ZodType>(file: string, schema: S): { data: z.output<S>; sha256: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { data: loadFile(file, schema), sha256: '' }; // reports the missing file
  }
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    if (parsed.success) return { data: parsed.data, sha256: sha256Text(text) };
  } catch {
    // not JSON: the loader says where
  }
  return { data: loadFile(file, schema), sha256: sha256Text(text) };
}

/** `--plan DIR`: the search file, the inputs' copies and the first rung. */
export function planSearch(
  dir: string,
  input: SearchInput,
  files: PlanFiles,
  labels: SearchFile['labels'],
): string {
  const t0 = performance.now();
  // A fresh directory: rung files left by another search would be taken for this one's.
  if (existsSync(join(dir, 'search.json')))
    throw new UsageError(`optimize: ${dir} already holds a search (search.json): plan into a new directory`);
  const setup = setupSearch(input);
  mkdirSync(join(dir, 'in'), { recursive: true });
  const copy = (from: string, name: string) => {
    const to = join('in', `${name}${extname(from) || '.yaml'}`);
    copyFileSync(from, join(dir, to));
    return { file: to, sha256: sha256Text(readFileSync(from)) };
  };
  const s = setup.settings;
  const search: SearchFile = {
    format: SEARCH_FORMAT,
    settings: {
      trials: s.trials,
      paths: s.paths,
      oos: s.oos,
      days: input.days,
      seed: s.seed,
      market: input.market,
      balance_usd: input.balanceUsd ?? null,
      method: s.method,
      race: s.race,
      eta: s.eta,
      finalists: s.finalists,
    },
    labels,
    inputs: {
      snapshot: copy(files.snapshot, 'snapshot'),
      strategy: copy(files.strategy, 'strategy'),
      space: copy(files.space, 'space'),
      dynamics: files.dynamics ? copy(files.dynamics, 'dynamics') : null,
    },
  };
  const text = `${JSON.stringify(search, null, 2)}\n`;
  writeAtomic(join(dir, 'search.json'), text);
  const m = new SearchMachine(setup.init);
  writeRung(dir, 1, sha256Text(text), m, performance.now() - t0);
  const b = m.batch()!;
  return `planned ${setup.candidates.length} candidates (${setup.init.valid.length} to run), ${m.looks.length} ${s.method === 'race' ? 'looks at most' : 'rungs'}; next: rung 1: ${b.cands.length} candidates x paths ${b.from}..${b.to - 1}\n`;
}

function writeRung(dir: string, rung: number, searchSha: string, m: SearchMachine, elapsedMs: number): void {
  writeAtomic(join(dir, `rung-${rung}.json`), `${JSON.stringify(rungFile(rung, searchSha, m, elapsedMs))}\n`);
}

interface Loaded {
  search: SearchFile;
  sha256: string;
  input: SearchInput;
  setup: ReturnType<typeof setupSearch>;
}

/** DIR/search.json and the inputs it names, each checked against its digest. */
function loadSearch(dir: string): Loaded {
  const file = join(dir, 'search.json');
  const { data: search, sha256 } = loadJson(file, SearchFile);
  const path = (k: keyof SearchFile['inputs']) => {
    const i = search.inputs[k]!;
    const p = join(dir, i.file);
    if (!existsSync(p)) throw new UsageError(`optimize: ${p} is missing (the plan copies it there)`);
    if (sha256Text(readFileSync(p)) !== i.sha256)
      throw new InputFileError([
        {
          file,
          line: undefined,
          column: undefined,
          path: `inputs.${k}.sha256`,
          message: `${p} changed since the plan`,
        },
      ]);
    return p;
  };
  const st = search.settings;
  const input: SearchInput = {
    snapshot: loadSnapshot(path('snapshot')),
    base: loadStrategy(path('strategy')),
    space: loadFile(path('space'), SpaceFile),
    trials: st.trials,
    paths: st.paths,
    oosPaths: st.oos,
    days: st.days,
    seed: st.seed,
    market: st.market,
    method: st.method,
    race: st.race,
    eta: st.eta,
    finalists: st.finalists,
    ...(st.balance_usd !== null ? { balanceUsd: st.balance_usd } : {}),
    ...(search.inputs.dynamics ? { dynamics: loadDynamics(path('dynamics')) } : {}),
  };
  return { search, sha256, input, setup: setupSearch(input) };
}

/** DIR/rung-R.json, which must exist (checked before the search is loaded: the likelier mistake). */
function rungPath(dir: string, rung: number): string {
  const file = join(dir, `rung-${rung}.json`);
  if (!existsSync(file)) throw new UsageError(`optimize: ${file} is missing (not planned or merged yet)`);
  return file;
}

function loadRung(
  dir: string,
  rung: number,
  l: Loaded,
): { file: string; data: RungFile; sha256: string; m: SearchMachine } {
  const file = rungPath(dir, rung);
  const { data, sha256 } = loadJson(file, RungFile);
  if (data.rung !== rung) throw new UsageError(`optimize: ${file} holds rung ${data.rung}, not ${rung}`);
  if (data.search_sha256 !== l.sha256)
    throw new UsageError(`optimize: ${file} belongs to another search than ${join(dir, 'search.json')}`);
  return { file, data, sha256, m: SearchMachine.fromState(l.setup.init, stateOf(data)) };
}

/** `--dir DIR --rung R --shard K/N`: runs the shard's slice of the rung's pairs, writes its part. */
export async function runShard(
  dir: string,
  rung: number,
  shard: Shard,
  workers: number,
  signal?: AbortSignal,
): Promise<string> {
  const t0 = performance.now();
  rungPath(dir, rung);
  const l = loadSearch(dir);
  const r = loadRung(dir, rung, l);
  const b = r.m.batch();
  if (!b) throw new UsageError(`optimize: rung ${rung} has nothing to run: the search is over`);
  const slice = shardSlice(b, shard);
  const len = slice.to - slice.from;
  const net = new Array<number>(len).fill(0);
  const drawdown = new Array<number>(len).fill(0);
  const ruined = new Array<number>(len).fill(0);
  const width = b.to - b.from;
  const index = new Map(b.cands.map((c, k) => [c, k]));
  const pool = new EvalPool({ spec: l.setup.spec, workers, ...(signal ? { signal } : {}) });
  let stored = 0;
  try {
    pool.setStrategies(l.setup.candidates.map((c) => c.strategy ?? null));
    await pool.run({
      jobs: sliceJobs(b, slice, CHUNK),
      store: (res: PathJobResult) => {
        for (let k = 0; k < res.count; k++) {
          const at = index.get(res.cand)! * width + (res.from + k - b.from) - slice.from;
          net[at] = res.totals[k * TOTALS + 5]!;
          drawdown[at] = res.totals[k * TOTALS + 6]!;
          ruined[at] = res.totals[k * TOTALS + 7]! ? 1 : 0;
          stored++;
        }
      },
    });
  } finally {
    await pool.close();
  }
  if (stored !== len) throw new UsageError('optimize: interrupted: no part written');
  const part: PartFile = {
    format: 'packbot.optimize-part/v1',
    rung,
    search_sha256: l.sha256,
    rung_sha256: r.sha256,
    shard,
    pairs: slice,
    net,
    drawdown,
    ruined,
    elapsed_ms: Math.round(performance.now() - t0),
  };
  mkdirSync(join(dir, `rung-${rung}`), { recursive: true });
  const out = join(dir, `rung-${rung}`, `part-${shard.index}.json`);
  writeAtomic(out, `${JSON.stringify(part)}\n`);
  return `rung ${rung} shard ${shard.index}/${shard.count}: ${len} of ${width * b.cands.length} pairs -> ${out}\n`;
}

/** `--dir DIR --merge-rung R`: the next rung file, or the result once the search is over. */
export function mergeRung(dir: string, rung: number): { next: string } | { result: OptimizeResult } {
  const t0 = performance.now();
  rungPath(dir, rung);
  const l = loadSearch(dir);
  const r = loadRung(dir, rung, l);
  const partsDir = join(dir, `rung-${rung}`);
  const names = existsSync(partsDir)
    ? readdirSync(partsDir)
        .filter((f) => /^part-\d+\.json$/.test(f))
        .sort()
    : [];
  const parts = names.map((f) => ({
    file: join(partsDir, f),
    part: loadJson(join(partsDir, f), PartFile).data,
  }));
  const slowest = storeParts(r.m, r, parts);
  r.m.close();
  const elapsed = r.data.elapsed_ms + slowest + (performance.now() - t0);
  if (r.m.phase !== 'done') {
    writeRung(dir, rung + 1, l.sha256, r.m, elapsed);
    const b = r.m.batch()!;
    const what =
      b.kind === 'oos'
        ? 'out of sample'
        : l.search.settings.method === 'race'
          ? `look ${b.rung + 1}`
          : `rung ${b.rung + 1}`;
    return {
      next: `next: rung ${rung + 1} (${what}): ${b.cands.length} candidates x paths ${b.from}..${b.to - 1}\n`,
    };
  }
  return {
    result: buildResult(r.m, {
      candidates: l.setup.candidates,
      space: l.input.space,
      params: l.setup.params,
      labels: l.search.labels,
      days: l.input.days,
      market: l.input.market,
      elapsedMs: elapsed,
    }),
  };
}
