/**
 * The static ratio's floors, on the bench's own engine.
 *
 * `staticSampler`: the sampler alone, as issue #26's "what to build" names it: the pool's alias
 * table over typed arrays, ten pulls an order drawn in one `fill`, each pull's cached plan looked
 * up by its outcome index and its amount summed; no listing, time, cash or decision.
 *
 * `staticFloor`: what a static path costs with nothing but the work no backtest can skip. Thirty
 * days of ten orders of ten pulls a minute apart; each pull drawn from the pool's alias table, sold
 * back or listed by its plan; each listing's end drawn and kept in the static loop's own heap, its
 * cash booked when it ends, with the drawdown. No decision, limit, budget, model sum or per-pool
 * total: `StaticPaths` does all of that besides. The bench reports both beside the static loop's
 * pulls/s, all against the raw alias loop.
 */

import type { Engine } from '../src/backtest/engine.js';
import { ACT_LIST, ACT_SELL } from '../src/backtest/pull-plans.js';
import { StaticListings } from '../src/backtest/static-listings.js';
import { listingSoldAfter, StaticRowsCache } from '../src/backtest/static-market.js';
import { DAY_MS } from '../src/core/clock.js';
import { Rng } from '../src/core/prng.js';

const DAYS = 30;
const ORDERS_A_DAY = 10;
const PULLS = 10;

/** The static market of the bench's engine and its one pool's labelled alias table. */
function benchPool(engine: Engine) {
  const cache = new StaticRowsCache(engine.model);
  const draws = cache.draws[0];
  if (!draws) throw new Error('the bench pool has nothing to draw');
  return { cache, draws };
}

/** A function drawing one path's pulls (30 days of ten orders of ten) per call; returns its pulls. */
export function staticSampler(engine: Engine): (seed: number) => number {
  const { draws } = benchPool(engine);
  const { action, amount, fallback } = engine.model.plans;
  const out = new Int32Array(PULLS);
  let sink = 0;
  return (seed) => {
    const rng = new Rng(seed);
    let s = 0;
    for (let o = 0; o < DAYS * ORDERS_A_DAY; o++) {
      draws.fill(rng, PULLS, out);
      for (let k = 0; k < PULLS; k++) {
        const j = out[k]!;
        s += action[j] === ACT_LIST ? fallback[j]! : amount[j]!;
      }
    }
    sink += s;
    if (sink === -1) console.log(sink);
    return DAYS * ORDERS_A_DAY * PULLS;
  };
}

/** A function running one floor path per call (seeded by its argument); returns its pulls. */
export function staticFloor(engine: Engine): (seed: number) => number {
  const model = engine.model;
  const { cache, draws } = benchPool(engine);
  const { action, amount, fill, sale, fallback } = model.plans;
  const logMiss = cache.logMiss;
  const maxDaysMs = model.strategy.sell.list.max_days * DAY_MS;
  const priceCents = model.pools[0]!.priceCents;
  const ls = new StaticListings();
  const out = new Int32Array(PULLS);
  let sink = 0;
  return (seed) => {
    const rng = new Rng(seed);
    ls.clear();
    let cash = 1e9;
    let listed = 0;
    let peak = cash;
    let maxDd = 0;
    for (let day = 0; day < DAYS; day++) {
      for (let o = 0; o < ORDERS_A_DAY; o++) {
        const t = day * DAY_MS + o * 60_000;
        while (ls.nextAt() <= t) {
          const l = ls.pop();
          cash += ls.amount[l]!;
          listed -= fallback[ls.plan[l]!]!;
          ls.free(l);
          const eq = cash + listed;
          if (eq > peak) peak = eq;
          else if (peak - eq > maxDd) maxDd = peak - eq;
        }
        draws.fill(rng, PULLS, out);
        cash -= PULLS * priceCents;
        ls.startOrder();
        for (let k = 0; k < PULLS; k++) {
          const j = out[k]!;
          const act = action[j]!;
          if (act === ACT_SELL) cash += amount[j]!;
          else if (act === ACT_LIST) {
            const after = listingSoldAfter(fill[j]!, logMiss[j]!, maxDaysMs, rng.next());
            if (after >= 0) ls.add(0, j, t, t + after, sale[j]!, 1);
            else ls.add(0, j, t, t + maxDaysMs, fallback[j]!, 0);
            listed += fallback[j]!;
          }
        }
        ls.endOrder(-1);
        const eq = cash + listed;
        if (eq > peak) peak = eq;
        else if (peak - eq > maxDd) maxDd = peak - eq;
      }
    }
    sink += maxDd;
    if (sink === -1) console.log(sink);
    return DAYS * ORDERS_A_DAY * PULLS;
  };
}
