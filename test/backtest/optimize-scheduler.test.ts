import { describe, expect, it } from 'vitest';
import type { PathJob } from '../../src/backtest/optimize/engine-cache.js';
import { BatchScheduler } from '../../src/backtest/optimize/scheduler.js';

const jobsOf = (cands: number[], perCand: number, chunk = 10): PathJob[] =>
  cands.flatMap((cand) =>
    Array.from({ length: perCand }, (_, k) => ({ cand, from: k * chunk, to: (k + 1) * chunk })),
  );

/** Hands out every job, threads taking turns, as a pool with one job in flight each would. */
function drain(s: BatchScheduler, threads: number): PathJob[][] {
  const got: PathJob[][] = Array.from({ length: threads }, () => []);
  const live = new Set(Array.from({ length: threads }, (_, t) => t));
  while (live.size > 0)
    for (const t of [...live]) {
      const j = s.next(t);
      if (j) got[t]!.push(j);
      else live.delete(t);
    }
  return got;
}

const key = (j: PathJob) => `${j.cand}:${j.from}`;

describe('optimize: the batch scheduler', () => {
  it('hands out every job exactly once, then the filler', () => {
    const jobs = jobsOf([0, 3, 5, 8], 3);
    const filler = jobsOf([0], 2).map((j) => ({ ...j, from: j.from + 100, to: j.to + 100 }));
    const s = new BatchScheduler(jobs, {
      threads: 2,
      holds: () => false,
      costPerPath: () => undefined,
      filler,
    });
    const got = drain(s, 2).flat();
    expect(got.map(key).sort()).toEqual([...jobs, ...filler].map(key).sort());
    expect(s.leftoverFiller()).toEqual([]);
  });

  it('keeps a candidate on the thread holding its engine, most expensive first', () => {
    const jobs = jobsOf([1, 2, 3, 4], 4);
    const holder = new Map([
      [1, 0],
      [2, 1],
      [3, 0],
      [4, 1],
    ]);
    const cost = new Map([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    const s = new BatchScheduler(jobs, {
      threads: 2,
      holds: (t, c) => holder.get(c) === t,
      costPerPath: (c) => cost.get(c),
    });
    expect(s.next(0)!.cand).toBe(3);
    expect(s.next(1)!.cand).toBe(4);
    const got = drain(s, 2);
    for (const j of got[0]!) expect([1, 3]).toContain(j.cand);
    for (const j of got[1]!) expect([2, 4]).toContain(j.cand);
  });

  it('lets an idle thread take unstarted candidates, then single jobs off the end of a running one', () => {
    // Everything is held by thread 0; thread 1 must help.
    const jobs = jobsOf([1, 2, 3], 6);
    const s = new BatchScheduler(jobs, {
      threads: 2,
      holds: (t) => t === 0,
      costPerPath: (c) => c,
    });
    expect(s.next(0)!.cand).toBe(3);
    // Thread 1 holds nothing: takes the cheapest unstarted candidate of thread 0.
    expect(s.next(1)!.cand).toBe(1);
    const got = drain(s, 2);
    const all = [...got[0]!, ...got[1]!];
    expect(all).toHaveLength(6 * 3 - 2);
    // The running candidate's jobs are taken from its end, so its first jobs stay on thread 0.
    const stolen = got[1]!.filter((j) => j.cand === 3).map((j) => j.from);
    for (const from of stolen) expect(from).toBeGreaterThan(0);
  });

  it('leaves the filler it did not hand out', () => {
    const filler = jobsOf([0], 3);
    const s = new BatchScheduler([], { threads: 2, holds: () => false, costPerPath: () => 1, filler });
    expect(s.next(0, false)).toBeNull(); // filling not allowed: nothing else to hold up
    expect(s.next(0)).toEqual(filler[0]);
    expect(s.leftoverFiller()).toEqual(filler.slice(1));
    expect(s.next(1)).toBeNull();
  });
});
