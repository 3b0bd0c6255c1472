/**
 * The search's decisions as a state machine over batches of (candidate, path) pairs: the looks of
 * the race (race.ts) or the rungs of successive halving, then the out-of-sample check. A batch is
 * every candidate still in the search on the same path range; once all its results are stored,
 * `close` decides who goes on. The machine holds no threads and no files: the in-process search
 * (search.ts) feeds it from worker threads, a sharded search (sharded.ts) from part files, one
 * batch per rung of Indexed Jobs, and its state round-trips through JSON between them. Every
 * decision reads results by (candidate, path index) in index order, so it does not depend on who
 * ran which path, or when.
 */
import type { SpaceFile } from '../../config/space-file.js';
import { type Figures, figures, type PathMetrics } from './metrics.js';
import { constraintCount, type RaceSettings, raceLook, raceLooks, testLevel } from './race.js';

export type SearchMethod = 'race' | 'halving';

export interface SearchSettings {
  method: SearchMethod;
  /** Candidates including the base. */
  trials: number;
  /** Paths of the last look or rung. */
  paths: number;
  /** Paths of the out-of-sample check (from `paths` on). */
  oos: number;
  seed: number;
  race: RaceSettings;
  /** Successive halving: share kept per rung is 1/eta; candidates in the last rung. */
  eta: number;
  finalists: number;
}

/** The pending batch: every candidate of `cands` on paths [from, to). */
export interface SearchBatch {
  kind: 'search' | 'oos';
  /** 0-based: the looks (or rungs) first, then the out-of-sample check. */
  rung: number;
  cands: number[];
  from: number;
  to: number;
}

export interface RungRecord {
  paths: number;
  candidates: number[];
  /** Who goes on to the next look or rung ([] at the last). */
  promoted: number[];
  /** The race's leader at this look; halving's best candidate of the rung (null: none feasible). */
  leader: number | null;
}

/** Halving's candidates per rung and paths per rung (the last rung has all `paths`). */
export function schedule(
  valid: number,
  paths: number,
  eta: number,
  finalists: number,
): { counts: number[]; paths: number[] } {
  const counts = [valid];
  while (counts[counts.length - 1]! > finalists)
    counts.push(Math.max(finalists, Math.ceil(counts[counts.length - 1]! / eta)));
  const rungs = counts.length;
  const p = counts.map((_, r) => Math.max(Math.min(paths, 8), Math.round(paths / eta ** (rungs - 1 - r))));
  for (let r = 1; r < rungs; r++) p[r] = Math.max(p[r]!, p[r - 1]!);
  p[rungs - 1] = paths;
  return { counts, paths: p };
}

/** Feasible candidates by objective (higher first), ties by id. */
function rank(ids: readonly number[], figs: ReadonlyMap<number, Figures>): number[] {
  return ids
    .filter((id) => figs.get(id)!.feasible)
    .sort((a, b) => figs.get(b)!.objective - figs.get(a)!.objective || a - b);
}

/** Per-path results, unset paths NaN in `net` (so a batch can be checked complete). */
function newMetrics(n: number, startCents: number): PathMetrics {
  return {
    net: new Float64Array(n).fill(Number.NaN),
    drawdown: new Float64Array(n),
    ruined: new Uint8Array(n),
    startCents,
  };
}

/** The machine's state between batches, as JSON (the sharded search's rung file holds it). */
export interface MachineState {
  look: number;
  phase: 'search' | 'oos' | 'done';
  active: number[];
  /** Active candidates' paths [0, the batch's from). */
  metrics: Record<string, SerialMetrics>;
  /** Out-of-sample paths [paths, paths + oos), null where not run yet. */
  oos_metrics: Record<string, SerialMetrics>;
  figures: Record<string, Figures>;
  last_rung: Record<string, number>;
  dropped: Record<string, string>;
  rungs: RungRecord[];
  winner: number | null;
  evaluated_paths: number;
}

export interface SerialMetrics {
  net: (number | null)[];
  drawdown: number[];
  ruined: number[];
}

export interface MachineInit {
  settings: SearchSettings;
  space: Pick<SpaceFile, 'objective' | 'constraints'>;
  startCents: number;
  /** Candidates the search runs (not skipped), the base (0) first. */
  valid: number[];
}

export class SearchMachine {
  readonly looks: number[];
  private readonly counts: number[] | null;
  private readonly level: number;
  private look = 0;
  phase: MachineState['phase'] = 'search';
  active: number[];
  private readonly metrics = new Map<number, PathMetrics>();
  private readonly oosMetrics = new Map<number, PathMetrics>();
  readonly figs = new Map<number, Figures>();
  readonly lastRung = new Map<number, number>();
  /** Why each candidate the race dropped was dropped. */
  readonly dropped = new Map<number, string>();
  readonly rungs: RungRecord[] = [];
  winner: number | null = null;
  /** Out-of-sample figures of the base and the winner, once the check is done. */
  oosFigs: Map<number, Figures> | null = null;
  evaluated = 0;

  constructor(readonly init: MachineInit) {
    const s = init.settings;
    if (s.method === 'race') {
      this.looks = raceLooks(s.paths, s.race);
      this.counts = null;
    } else {
      const plan = schedule(init.valid.length, s.paths, s.eta, s.finalists);
      this.looks = plan.paths;
      this.counts = plan.counts;
    }
    this.level = testLevel(
      s.race.alpha,
      this.looks.length,
      init.valid.length,
      constraintCount(init.space.constraints),
    );
    this.active = [...init.valid];
    for (const id of this.active) this.metrics.set(id, newMetrics(s.paths, init.startCents));
    // The base's out-of-sample paths are needed whatever the search finds: they may run any time.
    this.oosMetrics.set(0, newMetrics(s.oos, init.startCents));
  }

  /** The test level of each of the race's one-sided tests (race.ts). */
  get testLevel(): number {
    return this.level;
  }

  batch(): SearchBatch | null {
    const s = this.init.settings;
    if (this.phase === 'done') return null;
    if (this.phase === 'oos')
      return {
        kind: 'oos',
        rung: this.looks.length,
        cands: [...this.oosMetrics.keys()].sort((a, b) => a - b),
        from: s.paths,
        to: s.paths + s.oos,
      };
    return {
      kind: 'search',
      rung: this.look,
      cands: [...this.active],
      from: this.look > 0 ? this.looks[this.look - 1]! : 0,
      to: this.looks[this.look]!,
    };
  }

  /** Whether candidate `cand`'s result for path `path` is stored. */
  has(cand: number, path: number): boolean {
    const p = this.init.settings.paths;
    const m = path < p ? this.metrics.get(cand) : this.oosMetrics.get(cand);
    return m !== undefined && !Number.isNaN(m.net[path < p ? path : path - p]!);
  }

  /** Stores one path's result (cents); a path not in the search (or stored twice) is an error. */
  store(cand: number, path: number, net: number, drawdown: number, ruined: boolean): void {
    const p = this.init.settings.paths;
    const m = path < p ? this.metrics.get(cand) : this.oosMetrics.get(cand);
    const i = path < p ? path : path - p;
    if (!m || i >= m.net.length) throw new Error(`optimize: no place for candidate ${cand}'s path ${path}`);
    if (!Number.isNaN(m.net[i]!)) throw new Error(`optimize: candidate ${cand}'s path ${path} stored twice`);
    if (Number.isNaN(net)) throw new Error(`optimize: candidate ${cand}'s path ${path} has no result`);
    m.net[i] = net;
    m.drawdown[i] = drawdown;
    m.ruined[i] = ruined ? 1 : 0;
    this.evaluated++;
  }

  private checkComplete(b: SearchBatch): void {
    for (const c of b.cands)
      for (let i = b.from; i < b.to; i++)
        if (!this.has(c, i)) throw new Error(`optimize: candidate ${c}'s path ${i} was not run`);
  }

  /** Decides the pending batch (all its results stored): who goes on, or the winner, or the end. */
  close(): void {
    const b = this.batch();
    if (!b) throw new Error('optimize: the search is over');
    this.checkComplete(b);
    const space = this.init.space;
    if (b.kind === 'oos') {
      this.oosFigs = new Map(
        b.cands.map((c) => [c, figures(this.oosMetrics.get(c)!, this.init.settings.oos, space)]),
      );
      this.phase = 'done';
      return;
    }
    const n = b.to;
    for (const id of b.cands) {
      this.figs.set(id, figures(this.metrics.get(id)!, n, space));
      this.lastRung.set(id, this.look);
    }
    let promoted: number[];
    let leader: number | null;
    let last = this.look === this.looks.length - 1;
    if (this.counts) {
      const ranked = rank(b.cands, this.figs);
      leader = ranked[0] ?? null;
      promoted = last ? [] : ranked.slice(0, this.counts[this.look + 1]!);
      if (!last && !promoted.includes(0)) promoted.push(0);
      promoted.sort((x, y) => x - y);
    } else {
      const d = raceLook({
        active: b.cands,
        metrics: this.metrics,
        figs: this.figs,
        n,
        space,
        level: this.level,
        seed: this.init.settings.seed,
      });
      leader = d.leader;
      for (const [id, why] of d.dropped) this.dropped.set(id, `look ${this.look + 1}: ${why}`);
      const left = b.cands.filter((id) => !d.dropped.has(id));
      last ||= left.length <= 1;
      promoted = last ? [] : left;
      if (last) this.active = left;
    }
    this.rungs.push({ paths: n, candidates: b.cands, promoted, leader });
    if (!last) {
      for (const id of b.cands) if (!promoted.includes(id)) this.metrics.delete(id);
      this.active = promoted;
      this.look++;
      return;
    }
    // The winner: the best feasible candidate still in at the end (the base if none).
    this.winner = rank(this.counts ? b.cands : this.active, this.figs)[0] ?? 0;
    this.metrics.clear();
    this.active = [];
    if (this.winner !== 0)
      this.oosMetrics.set(this.winner, newMetrics(this.init.settings.oos, this.init.startCents));
    this.phase = 'oos';
    this.look = this.looks.length;
  }

  /** Out-of-sample per-path results (for the paired difference), once the check ran. */
  oosOf(cand: number): PathMetrics {
    const m = this.oosMetrics.get(cand);
    if (!m) throw new Error(`optimize: candidate ${cand} has no out-of-sample paths`);
    return m;
  }

  toState(): MachineState {
    const b = this.batch();
    const upTo = b?.kind === 'search' ? b.from : 0;
    const serial = (m: PathMetrics, n: number): SerialMetrics => ({
      net: Array.from(m.net.subarray(0, n), (v) => (Number.isNaN(v) ? null : v)),
      drawdown: Array.from(m.drawdown.subarray(0, n)),
      ruined: Array.from(m.ruined.subarray(0, n)),
    });
    const obj = <T>(m: ReadonlyMap<number, T>): Record<string, T> => Object.fromEntries(m);
    return {
      look: this.look,
      phase: this.phase,
      active: [...this.active],
      metrics: Object.fromEntries([...this.metrics].map(([id, m]) => [String(id), serial(m, upTo)])),
      oos_metrics: Object.fromEntries(
        [...this.oosMetrics].map(([id, m]) => [String(id), serial(m, m.net.length)]),
      ),
      figures: obj(this.figs),
      last_rung: obj(this.lastRung),
      dropped: obj(this.dropped),
      rungs: this.rungs.map((r) => ({ ...r })),
      winner: this.winner,
      evaluated_paths: this.evaluated,
    };
  }

  static fromState(init: MachineInit, s: MachineState): SearchMachine {
    const m = new SearchMachine(init);
    const ids = (r: Record<string, unknown>) => Object.keys(r).map(Number);
    m.look = s.look;
    m.phase = s.phase;
    m.active = [...s.active];
    const fill = (into: PathMetrics, from: SerialMetrics) => {
      from.net.forEach((v, i) => {
        if (v === null) return;
        into.net[i] = v;
        into.drawdown[i] = from.drawdown[i]!;
        into.ruined[i] = from.ruined[i]!;
      });
    };
    m.metrics.clear();
    for (const id of ids(s.metrics)) {
      const pm = newMetrics(init.settings.paths, init.startCents);
      fill(pm, s.metrics[id]!);
      m.metrics.set(id, pm);
    }
    m.oosMetrics.clear();
    for (const id of ids(s.oos_metrics)) {
      const pm = newMetrics(init.settings.oos, init.startCents);
      fill(pm, s.oos_metrics[id]!);
      m.oosMetrics.set(id, pm);
    }
    for (const id of ids(s.figures)) m.figs.set(id, s.figures[id]!);
    for (const id of ids(s.last_rung)) m.lastRung.set(id, s.last_rung[id]!);
    for (const id of ids(s.dropped)) m.dropped.set(id, s.dropped[id]!);
    m.rungs.push(...s.rungs.map((r) => ({ ...r })));
    m.winner = s.winner;
    m.evaluated = s.evaluated_paths;
    return m;
  }
}
