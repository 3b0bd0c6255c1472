/**
 * The static market's own path loop: `runPath` (path.ts) with the static market's answers taken
 * in place (no market object, no shop, no cards) and its listings in typed arrays, so that an
 * order of ten pulls costs little more than its ten draws. The same events in the same order,
 * the same decisions asked of src/strategy at the same slots, the same sums in the same order:
 * the same `PathResult`, field by field (test/backtest/static-path.test.ts runs both).
 */
import { DAY_MS } from '../core/clock.js';
import { roundHalfAway, toCents } from '../core/money.js';
import { budgetBlock, markedPnlCents, spendHeadroom } from '../strategy/budget.js';
import {
  decideOpen,
  type OpenDecision,
  opensAgain,
  opensPick,
  rowsNeverRead,
  waitCashCannotLift,
} from '../strategy/decide-open.js';
import type { ScoreRow } from '../strategy/score.js';
import { balanceBucketCents } from './balance-bucket.js';
import type { BacktestModel } from './model.js';
import { finishPath, pathRng, rowSdCents, startOpenState } from './path.js';
import type { PathResult } from './path-io.js';
import type { DrawParts, RowsPick } from './path-market.js';
import { PathModel } from './path-model.js';
import { ACT_HOLD, ACT_LIST, ACT_SELL } from './pull-plans.js';
import { StaticListings } from './static-listings.js';
import { listingSoldAfter, type StaticRowsCache } from './static-market.js';

const NO_ROWS: readonly ScoreRow[] = [];
const NO_CARDS = new Float64Array(0);

/**
 * Runs static paths of one engine: what does not change from path to path (the cheapest pool,
 * the pools' keys) is found once, and the listing arrays serve every path.
 */
export class StaticPaths {
  private readonly cheapest: number;
  private readonly cheapestPool: number;
  private readonly maxDaysMs: number;
  private readonly listings = new StaticListings();
  private readonly out = new Int32Array(10);
  private daily = new Float64Array(0);
  private equity = new Float64Array(0);
  private readonly poolPacks: Float64Array;
  private readonly poolSpend: Float64Array;
  private readonly poolValue: Float64Array;
  private readonly poolExpected: Float64Array;
  private pm: PathModel | null = null;
  private readonly parts: readonly DrawParts[];
  private pmEnd = Number.NaN;

  constructor(
    private readonly model: BacktestModel,
    private readonly cache: StaticRowsCache,
  ) {
    let cheapest = Number.POSITIVE_INFINITY;
    let cheapestPool = Number.POSITIVE_INFINITY;
    for (const p of model.pools) {
      if (p.dist && p.row?.decision.action === 'open') cheapest = Math.min(cheapest, p.priceCents);
      cheapestPool = Math.min(cheapestPool, p.priceCents);
    }
    this.cheapest = cheapest;
    this.cheapestPool = cheapestPool;
    this.maxDaysMs = model.strategy.sell.list.max_days * DAY_MS;
    // Copies of the pools' draw parts made here, with their final numbers: `PathModel.order`
    // reads them at every order, and the market's own objects change shape as they are summed.
    this.parts = cache.parts.map((p) => ({
      sellMean: p.sellMean,
      sellM2: p.sellM2,
      heldMean: p.heldMean,
      heldM2: p.heldM2,
    }));
    const nPools = model.pools.length;
    this.poolPacks = new Float64Array(nPools);
    this.poolSpend = new Float64Array(nPools);
    this.poolValue = new Float64Array(nPools);
    this.poolExpected = new Float64Array(nPools);
  }

  /** `run` with arrays of its own: the result stays valid after the next path. */
  runOwn(index: number, days: number, seed: number): PathResult {
    const r = this.run(index, days, seed);
    const copy = (a: Float64Array) => a.slice();
    return {
      ...r,
      equity: copy(r.equity),
      poolPacks: copy(r.poolPacks),
      poolSpend: copy(r.poolSpend),
      poolValue: copy(r.poolValue),
      poolExpected: copy(r.poolExpected),
      model: copy(r.model),
      modelPools: copy(r.modelPools),
    };
  }

  /**
   * Runs path `index`. The result's arrays belong to this runner and are overwritten by the next
   * path (a chunk copies them at once; `runOwn` for a result to keep).
   */
  run(index: number, days: number, seed: number): PathResult {
    const model = this.model;
    const cache = this.cache;
    const rng = pathRng(seed, index);
    const strategy = model.strategy;
    const plans = model.plans;
    const pools = model.pools;
    const nPools = pools.length;
    const start = model.startMs;
    const end = start + days * DAY_MS;
    const startCash = model.startBalanceCents;
    const minGap = model.limits.minSecondsBetween * 1000;
    const reserve = toCents(strategy.budget.min_balance_usd);
    const cheapest = this.cheapest;
    const cheapestPool = this.cheapestPool;
    const maxDaysMs = this.maxDaysMs;
    const action = plans.action;
    const amount = plans.amount;
    const fallback = plans.fallback;
    const fill = plans.fill;
    const sale = plans.sale;
    const logMiss = cache.logMiss;
    const wholeAmount = cache.wholeAmount;

    // The result's arrays and the model serve every path of this runner (`run`'s contract).
    if (this.equity.length !== days + 1) this.equity = new Float64Array(days + 1);
    const equity = this.equity;
    const poolPacks = this.poolPacks;
    const poolSpend = this.poolSpend;
    const poolValue = this.poolValue;
    const poolExpected = this.poolExpected;
    poolPacks.fill(0);
    poolSpend.fill(0);
    poolValue.fill(0);
    poolExpected.fill(0);
    // Packs per UTC day in a typed array (a growing holey array costs a transition per day).
    if (this.daily.length < days + 2) this.daily = new Float64Array(days + 2);
    const daily = this.daily;
    daily.fill(0);
    let utcDay = 0;
    const out = this.out;
    const ls = this.listings;
    ls.clear();
    if (this.pm === null || this.pmEnd !== end) {
      this.pm = new PathModel(strategy, nPools, plans, end);
      this.pmEnd = end;
    } else this.pm.reset();
    const pm = this.pm;

    const state = startOpenState(model);
    let cash = startCash;
    let packs = 0;
    let spend = 0;
    let payout = 0;
    let listingProceeds = 0;
    let sealedWorth = 0; // fractional cents
    let listedHold = 0;
    let peak = startCash;
    let maxDd = 0;
    let ruined = false;
    let rowsDone = false;

    let nextMidnight = state.resetsAt!;
    let nextSample = start + DAY_MS;
    let sample = 1;
    let tDecide = start;
    let lastCat = '';
    let lastPack = '';
    let lastRisk = '';
    let lastPi: number | undefined;
    equity[0] = startCash;

    // The static market's last rows (its balance bucket's) and their pick (StaticMarket.rows).
    let lastBalance = Number.NaN;
    let lastRows: readonly ScoreRow[] = NO_ROWS;
    let lastRowsPick: RowsPick | null = null;

    // The repeated open decision (path.ts).
    let runPick = null as RowsPick | null;
    let runD = null as OpenDecision | null;

    for (;;) {
      const nextListing = ls.nextAt();
      let t = tDecide;
      if (nextListing < t) t = nextListing;
      if (nextMidnight < t) t = nextMidnight;
      if (nextSample < t) t = nextSample;
      if (t >= end) break;
      if (nextListing <= t) {
        while (ls.nextAt() <= t) {
          const l = ls.pop();
          const plan = ls.plan[l]!;
          const a = ls.amount[l]!;
          // A listing counts at its sell-back value as of listing (fixed per listing) while it lasts.
          listedHold -= fallback[plan]!;
          cash += a;
          pm.endedIn(ls.slot[l]!, ls.pool[l]!, a);
          poolValue[ls.pool[l]!]! += a;
          if (ls.sold[l] === 1) listingProceeds += a;
          else payout += a;
          ls.free(l);
          const eq = cash + sealedWorth + listedHold;
          if (eq > peak) peak = eq;
          else if (peak - eq > maxDd) maxDd = peak - eq;
        }
        // Cash changed: the bot may open again unless it provably waits as it did (`waitHolds`).
        let holds = false;
        if (tDecide > t) {
          if (Math.max(waitCashCannotLift(state, t), t + 1) === tDecide) {
            state.balanceCents = cash;
            state.markedPnlCents = markedPnlCents(cash - startCash, 0, listedHold, sealedWorth);
            holds =
              budgetBlock(state, strategy) === null &&
              (ruined ||
                !(
                  cash - reserve < cheapest &&
                  spendHeadroom(state, strategy).limitedBy === 'balance_reserve' &&
                  ls.size === 0
                ));
          }
        }
        if (!holds && t < tDecide) tDecide = t;
        continue;
      }
      if (nextMidnight <= t) {
        state.packsLeftToday = model.limits.maxPacksPerDay;
        state.spentTodayCents = 0;
        nextMidnight += DAY_MS;
        utcDay++;
        state.resetsAt = nextMidnight;
        if (t < tDecide) tDecide = t;
        continue;
      }
      if (nextSample <= t) {
        equity[sample++] = roundHalfAway(cash + ls.holdings(sealedWorth, fallback));
        nextSample += DAY_MS;
        continue;
      }

      // A purchase slot.
      state.balanceCents = cash;
      state.markedPnlCents = markedPnlCents(cash - startCash, 0, listedHold, sealedWorth);
      if (!rowsDone && rowsNeverRead(state, strategy, cheapestPool)) rowsDone = true;
      let rows: readonly ScoreRow[] = NO_ROWS;
      if (!rowsDone) {
        const bucket = balanceBucketCents(cash);
        if (bucket !== lastBalance) {
          lastBalance = bucket;
          const hit = cache.get(bucket);
          lastRows = hit.rows;
          lastRowsPick = hit.pick;
        }
        rows = lastRows;
      }
      const pick = lastRowsPick;
      // path.ts: the last open decision repeated where `opensAgain` proves decideOpen gives it.
      const repeated: boolean =
        !rowsDone &&
        pick !== null &&
        pick === runPick &&
        runD !== null &&
        opensAgain(state, strategy, pick, runD, t);
      const d: OpenDecision = repeated ? runD! : decideOpen(state, rows, strategy, t);
      if (!repeated && d.action === 'open') {
        runPick = opensPick(d, pick) ? pick : null;
        runD = runPick ? d : null;
      }
      if (d.action === 'wait') {
        if (!ruined) {
          const block = budgetBlock(state, strategy);
          if (block?.guard === 'stop_loss') ruined = true;
          else if (
            cash - reserve < cheapest &&
            spendHeadroom(state, strategy).limitedBy === 'balance_reserve'
          )
            ruined = ls.size === 0;
        }
        tDecide = d.until !== undefined ? Math.max(d.until, t + 1) : Number.POSITIVE_INFINITY;
        continue;
      }
      if (d.category !== lastCat || d.pack_type !== lastPack || d.risk_level !== lastRisk) {
        lastCat = d.category;
        lastPack = d.pack_type;
        lastRisk = d.risk_level;
        lastPi = model.poolIndex.get(`${d.category}/${d.pack_type}/${d.risk_level}`);
      }
      const pi = lastPi;
      const draws = pi === undefined ? null : cache.draws[pi];
      if (pi === undefined || !draws) {
        // A failed order is refunded and gives its slot back.
        tDecide = t + 1000;
        continue;
      }
      const qty = d.quantity;
      draws.fill(rng, qty, out);
      const cost = qty * d.priceCents;
      cash -= cost;
      spend += cost;
      packs += qty;
      poolPacks[pi] = poolPacks[pi]! + qty;
      poolSpend[pi] = poolSpend[pi]! + cost;
      poolExpected[pi] = poolExpected[pi]! + qty * d.realizedEvCents;
      daily[utcDay]! += qty;
      state.packsLeftToday -= qty;
      state.spentTodayCents += cost;
      state.spentTotalCents += cost;
      state.lastPurchaseAt = t;
      state.nextPurchaseAt = t + minGap;
      // The pulls, with the sums `PathModel.resolvedPulls` would take of them; the model's sums of
      // the order after them (each of its fields gets the same terms in the same order).
      let sold = 0;
      let kept = 0;
      let sellSum = 0;
      let heldSum = 0;
      let whole = 1;
      ls.startOrder();
      for (let k = 0; k < qty; k++) {
        const j = out[k]!;
        const act = action[j]!;
        if (act === ACT_SELL) {
          const a = amount[j]!;
          cash += a;
          payout += a;
          sold++;
          sellSum += a;
          whole &= wholeAmount[j]!;
        } else if (act === ACT_HOLD) {
          const a = amount[j]!;
          sealedWorth += a;
          kept++;
          heldSum += a;
          whole &= wholeAmount[j]!;
        } else if (act === ACT_LIST) {
          const after = listingSoldAfter(fill[j]!, logMiss[j]!, maxDaysMs, rng.next());
          if (after >= 0) ls.add(pi, j, t, t + after, sale[j]!, 1);
          else ls.add(pi, j, t, t + maxDaysMs, fallback[j]!, 0);
          listedHold += fallback[j]!;
        }
      }
      const listed = ls.recentCount;
      const sd = repeated ? pick!.sdCents : rowSdCents(rows, d);
      pm.order(pi, qty, d.realizedEvCents, sd, cost, this.parts[pi]!, listed > 0);
      for (let k = 0; k < listed; k++) pm.listedPlan(ls.plan[ls.recent[k]!]!, t);
      pm.resolvedSums(pi, sold, kept, sellSum, heldSum, whole === 1, out, qty, poolValue);
      ls.endOrder(pm.closeOrder());
      const eq = cash + sealedWorth + listedHold;
      if (eq > peak) peak = eq;
      else if (peak - eq > maxDd) maxDd = peak - eq;
      tDecide = state.nextPurchaseAt;
    }

    let holdings = sealedWorth;
    for (let h = 0; h < ls.size; h++) {
      const l = ls.at(h);
      const v = fallback[ls.plan[l]!]!;
      holdings += v;
      poolValue[ls.pool[l]!]! += v;
      pm.openIn(ls.slot[l]!, ls.pool[l]!, ls.plan[l]!, ls.listedAt[l]!, v);
    }
    pm.finish();
    // As the general loop has it: an entry for each day with an order, holes elsewhere.
    const packsByUtcDay: number[] = [];
    for (let k = 0; k <= utcDay; k++) if (daily[k]! > 0) packsByUtcDay[k] = daily[k]!;
    return finishPath({
      index,
      equity,
      sample,
      days,
      cash,
      holdings,
      cardHoldings: 0,
      startCash,
      peak,
      maxDd,
      packs,
      spend,
      payout,
      listingProceeds,
      ruined,
      poolPacks,
      poolSpend,
      poolValue,
      poolExpected,
      packsByUtcDay,
      cards: NO_CARDS,
      pm,
    });
  }
}
