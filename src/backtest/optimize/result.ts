/**
 * The result of a search (`packbot.optimize/v1`, trials.json) from a finished SearchMachine: the
 * candidates and their figures, the looks or rungs, the out-of-sample check and the choice. The
 * in-process search and the last merge of a sharded one both build it here, from the same state,
 * so they give the same file.
 */
import type { SpaceFile } from '../../config/space-file.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { MarketKind } from '../path/path-io.js';
import type { Candidate } from './candidates.js';
import type { RungRecord, SearchMachine, SearchMethod } from './machine.js';
import { type Figures, pairedDifference } from './metrics.js';

export const OPTIMIZE_FORMAT = 'packbot.optimize/v1';

export interface Trial {
  id: number;
  params: Record<string, unknown>;
  status: 'evaluated' | 'skipped';
  skipped_reason: string | null;
  /** The last look or rung the candidate ran (0-based), and its figures there. */
  rung: number | null;
  figures: Figures | null;
  /** Why the race dropped it (null: not dropped, or halving). */
  dropped_reason: string | null;
}

export interface OptimizeResult {
  format: typeof OPTIMIZE_FORMAT;
  strategy: string;
  snapshot: string;
  space: string;
  seed: number;
  days: number;
  market: MarketKind;
  trials: number;
  paths: number;
  objective: SpaceFile['objective'];
  constraints: SpaceFile['constraints'];
  params: string[];
  method: SearchMethod;
  /** The race's rule: the family-wise error rate, each test's level, the looks (null: halving). */
  race: { alpha: number; test_level: number; looks: number[] } | null;
  rungs: RungRecord[];
  candidates: Trial[];
  /** The best feasible candidate still in at the end (0: the base). */
  winner: number;
  /** Winner's and base's figures on the paths each ran last (`paths`: the winner's). */
  in_sample: { paths: number; winner: Figures; base: Figures };
  out_of_sample: {
    /** Path indexes [from, to): none of them used by the search. */
    paths: { from: number; to: number };
    winner: Figures;
    base: Figures;
    difference: number;
    difference_stderr: number;
  };
  /** The recommended strategy's candidate: the winner, or the base when the winner did not hold up. */
  chosen: number;
  chosen_reason: string;
  chosen_strategy: Strategy;
  elapsed_ms: number;
  evaluated_paths: number;
}

export interface ResultMeta {
  candidates: Candidate[];
  space: SpaceFile;
  params: string[];
  labels: { strategy: string; snapshot: string; space: string };
  days: number;
  market: MarketKind;
  elapsedMs: number;
}

export function buildResult(m: SearchMachine, meta: ResultMeta): OptimizeResult {
  const s = m.init.settings;
  if (m.phase !== 'done' || m.winner === null || !m.oosFigs)
    throw new Error('optimize: the search is not finished');
  const winner = m.winner;
  const oosBase = m.oosFigs.get(0)!;
  const oosWinner = m.oosFigs.get(winner)!;
  const diff =
    winner === 0
      ? { difference: 0, stderr: 0 }
      : pairedDifference(m.oosOf(winner), m.oosOf(0), s.oos, meta.space.objective, s.seed);
  let chosen = winner;
  let reason: string;
  if (winner === 0) reason = 'no candidate beat the base strategy in sample';
  else if (oosWinner.objective >= oosBase.objective && (oosWinner.feasible || !oosBase.feasible))
    reason = `candidate ${winner} won the search and held up out of sample`;
  else {
    chosen = 0;
    reason = `candidate ${winner} won the search but not out of sample (${oosWinner.feasible ? `objective ${oosWinner.objective} < base ${oosBase.objective}` : `infeasible: ${oosWinner.infeasible_reason}`}): the base is kept`;
  }
  const trials: Trial[] = meta.candidates.map((c) => ({
    id: c.id,
    params: c.params,
    status: c.strategy ? 'evaluated' : 'skipped',
    skipped_reason: c.skipped ?? null,
    rung: m.lastRung.get(c.id) ?? null,
    figures: m.figs.get(c.id) ?? null,
    dropped_reason: m.dropped.get(c.id) ?? null,
  }));
  return {
    format: OPTIMIZE_FORMAT,
    strategy: meta.labels.strategy,
    snapshot: meta.labels.snapshot,
    space: meta.labels.space,
    seed: s.seed,
    days: meta.days,
    market: meta.market,
    trials: s.trials,
    paths: s.paths,
    objective: meta.space.objective,
    constraints: meta.space.constraints,
    params: meta.params,
    method: s.method,
    race: s.method === 'race' ? { alpha: s.race.alpha, test_level: m.testLevel, looks: m.looks } : null,
    rungs: m.rungs,
    candidates: trials,
    winner,
    in_sample: { paths: m.figs.get(winner)!.paths, winner: m.figs.get(winner)!, base: m.figs.get(0)! },
    out_of_sample: {
      paths: { from: s.paths, to: s.paths + s.oos },
      winner: oosWinner,
      base: oosBase,
      difference: diff.difference,
      difference_stderr: diff.stderr,
    },
    chosen,
    chosen_reason: reason,
    chosen_strategy: meta.candidates[chosen]!.strategy!,
    elapsed_ms: Math.round(meta.elapsedMs),
    evaluated_paths: m.evaluated,
  };
}
