/**
 * Candidates of a search: the base strategy first (candidate 0), then a Latin hypercube sample of
 * the space drawn with a seeded generator (each parameter's range cut into as many strata as
 * there are candidates, one draw per stratum, strata shuffled per parameter), so a seed gives the
 * same candidates. A candidate the strategy schema or the snapshot rejects is kept, skipped, with
 * the reason; one equal to an earlier candidate is skipped as a duplicate.
 */
import type { SnapshotFile } from '../../api/snapshot-schema.js';
import { type ResolvedParam, snap } from '../../config/space-file.js';
import { Rng } from '../../core/prng.js';
import { type Strategy, StrategyFile } from '../../strategy/strategy-schema.js';
import { strategyMisfit } from '../run/strategy-fit.js';

export interface Candidate {
  id: number;
  /** The value of every parameter of the space (the base's own values for candidate 0). */
  params: Record<string, unknown>;
  /** The strategy to run; absent when skipped. */
  strategy?: Strategy;
  skipped?: string;
}

function getAt(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const k of path.split('.')) cur = (cur as Record<string, unknown>)[k];
  return cur;
}

function setAt(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) cur = cur[k] as Record<string, unknown>;
  cur[keys[keys.length - 1]!] = value;
}

/** The value of a parameter at u ∈ [0, 1). */
function valueAt(p: ResolvedParam, u: number): unknown {
  const spec = p.spec;
  if ('choice' in spec)
    return spec.choice[Math.min(spec.choice.length - 1, Math.floor(u * spec.choice.length))];
  const [lo, hi] = spec.range;
  const v = spec.log ? Math.exp(Math.log(lo) + u * (Math.log(hi) - Math.log(lo))) : lo + u * (hi - lo);
  return snap(spec, v, p.integer);
}

/** The base strategy with `params` applied, or why the strategy schema or the snapshot refuse it. */
function applyParams(
  base: Strategy,
  params: Record<string, unknown>,
  snapshot: SnapshotFile,
): { strategy: Strategy } | { reason: string } {
  const raw = structuredClone(base) as unknown as Record<string, unknown>;
  for (const [path, value] of Object.entries(params)) setAt(raw, path, structuredClone(value));
  const parsed = StrategyFile.safeParse(raw);
  if (!parsed.success)
    return {
      reason: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    };
  const misfit = strategyMisfit(parsed.data, snapshot);
  if (misfit) return { reason: `${misfit.field}: ${misfit.message}` };
  return { strategy: parsed.data };
}

export function sampleCandidates(
  base: Strategy,
  params: ResolvedParam[],
  trials: number,
  seed: number,
  snapshot: SnapshotFile,
): Candidate[] {
  const baseParams = Object.fromEntries(params.map((p) => [p.path, getAt(base, p.path)]));
  const out: Candidate[] = [{ id: 0, params: baseParams, strategy: base }];
  const m = trials - 1;
  const rng = new Rng(seed).fork(0x0c7a1d);
  const us = params.map(() => {
    const strata = Array.from({ length: m }, (_, i) => i);
    for (let i = m - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [strata[i], strata[j]] = [strata[j]!, strata[i]!];
    }
    return strata.map((s) => (s + rng.next()) / m);
  });
  const seen = new Map<string, number>([[JSON.stringify(baseParams), 0]]);
  for (let c = 0; c < m; c++) {
    const id = c + 1;
    const values = Object.fromEntries(params.map((p, k) => [p.path, valueAt(p, us[k]![c]!)]));
    const key = JSON.stringify(values);
    const same = seen.get(key);
    if (same !== undefined) {
      out.push({ id, params: values, skipped: `same parameters as candidate ${same}` });
      continue;
    }
    seen.set(key, id);
    const applied = applyParams(base, values, snapshot);
    if ('reason' in applied) out.push({ id, params: values, skipped: applied.reason });
    else out.push({ id, params: values, strategy: applied.strategy });
  }
  return out;
}
