/**
 * The static market: the snapshot's pools, unchanged for ever (draws with replacement from the
 * exact pull distribution), and listings that fill with the strategy's own fill probability within
 * `max_days` — the scoring model, so a backtest's means converge to `packbot score`'s realized EV.
 */
import { DAY_MS } from '../core/clock.js';
import type { Rng } from '../core/prng.js';
import { type ScoreRow, scorePools } from '../strategy/score.js';
import type { BacktestModel } from './model.js';
import type { DrawParts, Listing, PathMarket } from './path-market.js';
import { addDrawn, clearDrawParts } from './path-model.js';

/** Rows depend on the balance only through sizing; shared by every path of a worker per bucket. */
export class StaticRowsCache {
  private readonly cache = new Map<number, readonly ScoreRow[]>();
  private readonly bodies;
  constructor(private readonly model: BacktestModel) {
    this.bodies = model.pools.filter((p) => p.dist !== null).map((p) => p.body);
  }

  get(balanceCents: number): readonly ScoreRow[] {
    let rows = this.cache.get(balanceCents);
    if (!rows) {
      rows = scorePools(this.bodies, this.model.strategy, {
        balanceCents,
        maxQuantity: this.model.maxQuantity,
      });
      this.cache.set(balanceCents, rows);
    }
    return rows;
  }
}

export class StaticMarket implements PathMarket {
  /** Cards are backtested in the dynamic market only (the report says so). */
  readonly shop = null;
  private readonly maxDaysMs: number;

  constructor(
    private readonly model: BacktestModel,
    private readonly cache: StaticRowsCache,
  ) {
    this.maxDaysMs = model.strategy.sell.list.max_days * DAY_MS;
  }

  advance(): void {}

  /** The snapshot's distribution, for ever: each atom's plan with its probability. */
  drawParts(pool: number, _now: number, out: DrawParts): void {
    clearDrawParts(out);
    const p = this.model.pools[pool]!;
    const dist = p.dist;
    if (!dist) return;
    for (let i = 0; i < dist.size; i++) addDrawn(out, this.model.plans, p.atomPlan[i]!, dist.prob[i]!);
  }

  rows(balanceCents: number): readonly ScoreRow[] {
    return this.cache.get(balanceCents);
  }

  /** Rows are cached per balance bucket and the refresh time is fixed: nothing to keep. */
  rowsUnread(): void {}

  nextRefreshAt(): number {
    return Number.POSITIVE_INFINITY;
  }

  open(pool: number, qty: number, _now: number, rng: Rng, out: Int32Array): number {
    const p = this.model.pools[pool]!;
    const alias = p.alias;
    if (!alias) return -1;
    const atomPlan = p.atomPlan;
    for (let k = 0; k < qty; k++) out[k] = atomPlan[alias.draw(rng)]!;
    return qty;
  }

  list(l: Listing, now: number, rng: Rng): void {
    const plans = this.model.plans;
    const fill = plans.fill[l.plan]!;
    const d = this.maxDaysMs;
    const u = rng.next();
    if (u < fill) {
      // Constant hazard with P(sold within max_days) = fill; the time is drawn given that it sells.
      const at = fill >= 1 ? u * d : (d * Math.log(1 - u)) / Math.log(1 - fill);
      l.eventAt = now + Math.min(d, Math.max(0, at));
      l.outcome = 'sold';
      l.amountCents = plans.sale[l.plan]!;
    } else {
      l.eventAt = now + d;
      l.outcome = 'sold_back';
      l.amountCents = plans.fallback[l.plan]!;
    }
  }

  holdValue(l: Listing): number {
    return this.model.plans.fallback[l.plan]!;
  }
}
