/**
 * What an order is expected to realize, as the scorer saw it when it was opened: the row's
 * realized EV and spread per pack, split by where each pull goes under the strategy's pull policy
 * — sold back at once, listed, or held (sealed packs, at the strategy's worth of them). One pass
 * over the pull distribution, with the very policy `realizedStats` and `decidePull` apply, so the
 * parts add up to the row's realized EV.
 */
import { roundHalfAway, toCents } from '../core/money.js';
import { KIND_SEALED, type PullDistribution } from './distribution.js';
import { FRESH_RATE } from './listing-model.js';
import { compilePolicy, newScratch, sealedValueCents } from './pull-policy.js';
import type { ScoreRow } from './score.js';
import type { Strategy } from './strategy-schema.js';

/** Where a pull's money comes from; each is compared with the model on its own. */
export const MODEL_PARTS = ['sell_back', 'listing', 'held'] as const;
export type ModelPart = (typeof MODEL_PARTS)[number];

/** Mean and standard deviation of one pack's part (cents; a pack is one pull). */
export interface PartPromise {
  meanCents: number;
  sdCents: number;
}

export type PartsPromise = Record<ModelPart, PartPromise>;

/**
 * The model's promise for one order, per pack: what `packbot report` compares with what the
 * pulls realized. Cents, rounded to the cent (expectations are not amounts paid, but cents keep
 * the ledger's convention and lose nothing that matters at a pack's scale).
 */
export interface OrderPromise {
  packs: number;
  priceCents: number;
  evCents: number;
  realizedEvCents: number;
  sdCents: number;
  pLoss: number;
  parts: PartsPromise;
}

/** Per-pack moments of each part over the distribution (unrounded cents, cents²). */
export function partMoments(
  dist: PullDistribution,
  strategy: Strategy,
): Record<ModelPart, { mean: number; m2: number }> {
  const out = {
    sell_back: { mean: 0, m2: 0 },
    listing: { mean: 0, m2: 0 },
    held: { mean: 0, m2: 0 },
  };
  const policy = compilePolicy(strategy);
  const plan = newScratch();
  for (let i = 0; i < dist.size; i++) {
    const p = dist.prob[i]!;
    const v = dist.value[i]!;
    if (dist.kind[i] === KIND_SEALED) {
      const x = sealedValueCents(v, strategy);
      out.held.mean += p * x;
      out.held.m2 += p * x * x;
      continue;
    }
    policy.evaluate(v, FRESH_RATE, plan);
    if (plan.list) {
      out.listing.mean += p * plan.expectedCents;
      out.listing.m2 += p * (plan.fill * plan.saleCents ** 2 + (1 - plan.fill) * plan.fallbackCents ** 2);
    } else {
      out.sell_back.mean += p * plan.payoutCents;
      out.sell_back.m2 += p * plan.payoutCents ** 2;
    }
  }
  return out;
}

/** The promise of an order of `packs` packs opened on `row`, whose pool's distribution is `dist`. */
export function orderPromise(
  row: Pick<ScoreRow, 'price' | 'ev' | 'realized_ev' | 'realized_stdev' | 'p_loss'>,
  dist: PullDistribution,
  strategy: Strategy,
  packs: number,
): OrderPromise {
  const m = partMoments(dist, strategy);
  const part = (x: { mean: number; m2: number }): PartPromise => ({
    meanCents: roundHalfAway(x.mean),
    sdCents: roundHalfAway(Math.sqrt(Math.max(0, x.m2 - x.mean * x.mean))),
  });
  return {
    packs,
    priceCents: toCents(row.price),
    evCents: toCents(row.ev),
    realizedEvCents: toCents(row.realized_ev),
    sdCents: toCents(row.realized_stdev),
    pLoss: row.p_loss,
    parts: { sell_back: part(m.sell_back), listing: part(m.listing), held: part(m.held) },
  };
}
