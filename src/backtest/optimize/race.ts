/**
 * The racing rule of `packbot optimize`: every candidate still in the race runs the same paths
 * (common random numbers), and after each look (a batch of paths, doubling: 25, 50, 100, …, all)
 * a candidate is dropped as soon as the paths so far show, with the stated confidence, that it is
 * behind the leader or breaks a constraint; not at fixed rung sizes, so a clearly worse candidate
 * costs a few paths and two close ones run until they are told apart (or the paths run out).
 *
 * The tests, each one-sided at level a = α / (L · (M − 1 + K)) (Bonferroni; L looks, M candidates,
 * K constraints of the space):
 * - objective: the leader is the best candidate by objective among those meeting the constraints
 *   on the paths so far. A candidate is dropped when its paired difference to the leader (per path:
 *   its objective's sample minus the leader's on the same path; a mean, or for a median or p5 the
 *   difference of the quantiles with a seeded paired-bootstrap standard error) is below 0 by more
 *   than t·se, t the Student quantile of a with n − 1 degrees of freedom.
 * - constraints: a share bound (P(ruin), P(loss), and for the drawdown bound the share of paths
 *   drawing down more than it, which must stay under 5%) is broken when its Wilson lower bound at
 *   the normal quantile of a is above it.
 * Why that level: the best candidate meets at most M − 1 leaders and K constraint tests at each of
 * L looks; a union bound over all of them keeps the chance that it is ever dropped at most α
 * (provided the leaders it meets do meet the constraints; the normal approximation of the mean of
 * the paired differences and of the proportions besides). Bonferroni over looks is valid whatever
 * the looks' dependence, at the price of some power.
 */
import type { SpaceFile } from '../../config/space-file.js';
import { normalQuantile, studentQuantile, wilsonLower } from './distributions.js';
import { type Figures, type PathMetrics, pairedDifference } from './metrics.js';

export interface RaceSettings {
  /** The chance the best candidate is dropped (family-wise over candidates and looks). */
  alpha: number;
  /** Paths of the first look. */
  first: number;
  /** Each look runs `growth` times the paths of the one before. */
  growth: number;
}

export const RACE_DEFAULTS: RaceSettings = { alpha: 0.05, first: 25, growth: 2 };

/** The path counts at which the race looks: `first`, then × `growth`, ending at `paths`. */
export function raceLooks(paths: number, s: Pick<RaceSettings, 'first' | 'growth'>): number[] {
  const looks = [Math.min(paths, Math.max(2, s.first))];
  while (looks[looks.length - 1]! < paths)
    looks.push(
      Math.min(
        paths,
        Math.max(looks[looks.length - 1]! + 1, Math.round(looks[looks.length - 1]! * s.growth)),
      ),
    );
  return looks;
}

type Constraints = SpaceFile['constraints'];

export function constraintCount(c: Constraints): number {
  return [c.p_ruin_max, c.p_loss_max, c.max_drawdown_p95_max].filter((x) => x !== undefined).length;
}

/** The level of each one-sided test (see the head of this file). */
export function testLevel(alpha: number, looks: number, candidates: number, constraints: number): number {
  return alpha / (looks * Math.max(1, candidates - 1 + constraints));
}

export interface RaceLook {
  /** The leader the others were compared with (null: no candidate meets the constraints yet). */
  leader: number | null;
  /** Candidates dropped at this look, with why. */
  dropped: Map<number, string>;
}

const fmt = (x: number) => String(Math.round(x * 1e4) / 1e4);

/** Why a candidate breaks a constraint with confidence on its first `n` paths, or null. */
function brokenConstraint(m: PathMetrics, n: number, c: Constraints, z: number): string | null {
  const bound = (name: string, k: number, max: number, what: string) => {
    const lower = wilsonLower(k, n, z);
    return lower > max
      ? `${name} at least ${fmt(lower)} > ${max} (${k} of ${n} paths ${what}; Wilson bound, z ${fmt(z)})`
      : null;
  };
  if (c.p_ruin_max !== undefined) {
    let k = 0;
    for (let i = 0; i < n; i++) k += m.ruined[i]!;
    const why = bound('p_ruin', k, c.p_ruin_max, 'ruined');
    if (why) return why;
  }
  if (c.p_loss_max !== undefined) {
    let k = 0;
    for (let i = 0; i < n; i++) if (m.net[i]! < 0) k++;
    const why = bound('p_loss', k, c.p_loss_max, 'at a loss');
    if (why) return why;
  }
  if (c.max_drawdown_p95_max !== undefined) {
    const cents = c.max_drawdown_p95_max * 100;
    let k = 0;
    for (let i = 0; i < n; i++) if (m.drawdown[i]! > cents) k++;
    const why = bound(
      `share drawing down more than ${c.max_drawdown_p95_max}`,
      k,
      0.05,
      `past ${c.max_drawdown_p95_max} USD`,
    );
    if (why) return `max_drawdown_p95 above ${c.max_drawdown_p95_max}: ${why}`;
  }
  return null;
}

/**
 * One look of the race: after every candidate of `active` ran paths [0, n), which are dropped.
 * `figs`: their figures on those paths. Pure, and read in candidate-id and path-index order.
 */
export function raceLook(args: {
  active: readonly number[];
  metrics: ReadonlyMap<number, PathMetrics>;
  figs: ReadonlyMap<number, Figures>;
  n: number;
  space: Pick<SpaceFile, 'objective' | 'constraints'>;
  level: number;
  seed: number;
}): RaceLook {
  const { active, metrics, figs, n, space, level } = args;
  const dropped = new Map<number, string>();
  if (n < 2) return { leader: null, dropped };
  const z = -normalQuantile(level);
  const t = studentQuantile(level, n - 1);
  for (const id of active) {
    const why = brokenConstraint(metrics.get(id)!, n, space.constraints, z);
    if (why) dropped.set(id, why);
  }
  let leader: number | null = null;
  for (const id of active) {
    if (dropped.has(id) || !figs.get(id)!.feasible) continue;
    if (leader === null || figs.get(id)!.objective > figs.get(leader)!.objective) leader = id;
  }
  if (leader === null) return { leader, dropped };
  for (const id of active) {
    if (id === leader || dropped.has(id)) continue;
    const d = pairedDifference(metrics.get(id)!, metrics.get(leader)!, n, space.objective, args.seed, false);
    if (d.difference + t * d.stderr < 0)
      dropped.set(
        id,
        `behind candidate ${leader} by ${fmt(-d.difference)} ± ${fmt(d.stderr)} (paired, ${n} paths; t ${fmt(t)})`,
      );
  }
  return { leader, dropped };
}
