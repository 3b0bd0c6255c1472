/**
 * Which job a thread runs next, within one batch of jobs (a rung, the out-of-sample check).
 * Results are stored by (candidate, path index), so this decides only how long a search takes,
 * never what it finds. Two costs are weighed:
 * - a candidate run by a thread that does not hold its engine pays a fresh engine (construction
 *   and caches warming: about ten paths' time), so a candidate stays on one thread, the one that
 *   ran it in earlier rungs;
 * - the end of a batch, where a thread idles while another finishes: candidates are started most
 *   expensive first (measured time per path × paths), a thread out of its own work takes the
 *   cheapest unstarted candidate of the busiest thread, then single chunks off the end of the
 *   candidates others are running, then background work (`filler`: jobs needed later whatever the
 *   search decides, such as the base strategy's out-of-sample paths).
 */
import type { PathJob } from './engine-cache.js';

interface Work {
  cand: number;
  jobs: PathJob[];
  /** Jobs [head, tail) not handed out yet. */
  head: number;
  tail: number;
  /** Estimated ms per job. */
  perJob: number;
}

const remaining = (w: Work) => w.tail - w.head;

export interface SchedulerOptions {
  threads: number;
  /** Whether a thread holds the candidate's engine. */
  holds: (thread: number, cand: number) => boolean;
  /** Measured ms per path of a candidate, undefined when never run. */
  costPerPath: (cand: number) => number | undefined;
  /** Jobs run only when nothing of the batch is left for the thread. */
  filler?: PathJob[];
}

export class BatchScheduler {
  /** Per thread: candidates it holds, not started, most expensive first. */
  private readonly own: Work[][];
  /** Candidates no thread holds, most expensive first (all of them in the first rung). */
  private readonly shared: Work[] = [];
  /** Per thread: the candidate it is running. */
  private readonly current: (Work | null)[];
  private readonly filler: PathJob[];
  private fillerNext = 0;

  constructor(
    jobs: readonly PathJob[],
    private readonly opts: SchedulerOptions,
  ) {
    const n = Math.max(1, opts.threads);
    this.own = Array.from({ length: n }, () => []);
    this.current = Array.from({ length: n }, () => null);
    this.filler = opts.filler ?? [];
    const byCand = new Map<number, PathJob[]>();
    for (const j of jobs) {
      const list = byCand.get(j.cand);
      if (list) list.push(j);
      else byCand.set(j.cand, [j]);
    }
    const known = [...byCand.keys()].map((c) => opts.costPerPath(c)).filter((c) => c !== undefined);
    const fallback = known.length > 0 ? known.reduce((s, c) => s + c, 0) / known.length : 1;
    const works: Work[] = [...byCand].map(([cand, list]) => {
      const paths = list.reduce((s, j) => s + j.to - j.from, 0);
      const perPath = opts.costPerPath(cand) ?? fallback;
      return { cand, jobs: list, head: 0, tail: list.length, perJob: (perPath * paths) / list.length };
    });
    works.sort((a, b) => b.perJob * remaining(b) - a.perJob * remaining(a) || a.cand - b.cand);
    // Greedy longest-first split among the threads holding each engine; the rest is shared.
    const load = new Array<number>(n).fill(0);
    for (const w of works) {
      let best = -1;
      for (let t = 0; t < n; t++) if (opts.holds(t, w.cand) && (best < 0 || load[t]! < load[best]!)) best = t;
      if (best < 0) this.shared.push(w);
      else {
        this.own[best]!.push(w);
        load[best]! += w.perJob * remaining(w);
      }
    }
  }

  /**
   * The next job for `thread`, or null when it has nothing useful left to do in this batch.
   * `fill`: whether a filler job may be given (the caller allows one only while another thread
   * still runs the batch's own jobs and this one has nothing in flight, so filling never holds up
   * the batch by more than one job).
   */
  next(thread: number, fill = true): PathJob | null {
    const cur = this.current[thread];
    if (cur && remaining(cur) > 0) return cur.jobs[cur.head++]!;
    const started = this.own[thread]!.shift() ?? this.shared.shift() ?? this.takeUnstarted(thread);
    if (started) {
      this.current[thread] = started;
      return started.jobs[started.head++]!;
    }
    const stolen = this.steal(thread);
    if (stolen || !fill || this.fillerNext >= this.filler.length) return stolen;
    return this.filler[this.fillerNext++]!;
  }

  /** Filler jobs not handed out (to run as ordinary jobs later). */
  leftoverFiller(): PathJob[] {
    const left = this.filler.slice(this.fillerNext);
    this.fillerNext = this.filler.length;
    return left;
  }

  /** The cheapest unstarted candidate of the thread with the most unstarted work. */
  private takeUnstarted(thread: number): Work | undefined {
    let victim = -1;
    let most = 0;
    for (let t = 0; t < this.own.length; t++) {
      if (t === thread) continue;
      const load = this.own[t]!.reduce((s, w) => s + w.perJob * remaining(w), 0);
      if (load > most) {
        most = load;
        victim = t;
      }
    }
    return victim < 0 ? undefined : this.own[victim]!.pop();
  }

  /**
   * The last job of the candidate another thread has most left of, when taking it shortens the
   * batch: the victim still has the job it is running, so one job left is worth taking when the
   * engine is here, two when this thread must build it.
   */
  private steal(thread: number): PathJob | null {
    let victim: Work | null = null;
    for (let t = 0; t < this.current.length; t++) {
      const w = this.current[t];
      if (t === thread || !w || remaining(w) === 0) continue;
      if (!victim || w.perJob * remaining(w) > victim.perJob * remaining(victim)) victim = w;
    }
    if (!victim) return null;
    const need = this.opts.holds(thread, victim.cand) ? 1 : 2;
    if (remaining(victim) < need) return null;
    return victim.jobs[--victim.tail]!;
  }
}
