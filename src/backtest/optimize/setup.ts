/**
 * From a search's inputs to what runs it: the engines' common spec, the candidates (sampled from
 * the seed, so every process of a sharded search derives the same ones) and the decision
 * machine's settings. Shared by the in-process search and every step of a sharded one.
 */
import type { SnapshotFile } from '../../api/snapshot-schema.js';
import { resolveParams, type SpaceFile } from '../../config/space-file.js';
import { UsageError } from '../../core/errors.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { MarketKind } from '../path/path-io.js';
import { Engine } from '../run/engine.js';
import { strategyMisfit } from '../run/strategy-fit.js';
import type { DynamicsInput } from '../world/dynamic-market.js';
import { type Candidate, sampleCandidates } from './candidates.js';
import type { PoolSpec } from './engine-cache.js';
import type { MachineInit, SearchMethod, SearchSettings } from './machine.js';
import { RACE_DEFAULTS, type RaceSettings } from './race.js';

export interface SearchInput {
  snapshot: SnapshotFile;
  base: Strategy;
  space: SpaceFile;
  /** Candidates including the base. */
  trials: number;
  /** Paths of the last look or rung (and of the out-of-sample check unless `oosPaths`). */
  paths: number;
  days: number;
  seed: number;
  market: MarketKind;
  balanceUsd?: number;
  dynamics?: DynamicsInput;
  /** `race` (default) or the fixed rungs of successive halving. */
  method?: SearchMethod;
  race?: Partial<RaceSettings>;
  /** Halving: share kept per rung is 1/eta (default 3); candidates in the last rung (default 3). */
  eta?: number;
  finalists?: number;
  oosPaths?: number;
}

export interface SearchSetup {
  spec: PoolSpec;
  settings: SearchSettings;
  candidates: Candidate[];
  params: string[];
  init: MachineInit;
}

function searchSettings(input: SearchInput): SearchSettings {
  return {
    method: input.method ?? 'race',
    trials: input.trials,
    paths: input.paths,
    oos: input.oosPaths ?? input.paths,
    seed: input.seed,
    race: { ...RACE_DEFAULTS, ...input.race },
    eta: input.eta ?? 3,
    finalists: input.finalists ?? 3,
  };
}

export function poolSpec(input: SearchInput): PoolSpec {
  return {
    snapshot: input.snapshot,
    days: input.days,
    seed: input.seed,
    market: input.market,
    ...(input.balanceUsd !== undefined ? { balanceUsd: input.balanceUsd } : {}),
    ...(input.dynamics !== undefined ? { dynamics: input.dynamics } : {}),
    // A search reads each path's net P&L, drawdown and ruin, never the model's sums.
    totalsOnly: true,
  };
}

/** Everything but the spec, which the in-process search needs first (its workers start early). */
export function setupSearch(input: SearchInput): SearchSetup {
  const misfit = strategyMisfit(input.base, input.snapshot);
  if (misfit) throw new UsageError(`base strategy: ${misfit.field}: ${misfit.message}`);
  const spec = poolSpec(input);
  const settings = searchSettings(input);
  const startCents = new Engine({ ...spec, strategy: input.base }).model.startBalanceCents;
  const params = resolveParams(input.space);
  const candidates = sampleCandidates(input.base, params, input.trials, input.seed, input.snapshot);
  const valid = candidates.filter((c) => c.strategy).map((c) => c.id);
  return {
    spec,
    settings,
    candidates,
    params: params.map((p) => p.path),
    init: { settings, space: input.space, startCents, valid },
  };
}
