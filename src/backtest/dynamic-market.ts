/**
 * The dynamic market, per path: the snapshot's packs with depletable bands (our pulls and other
 * users' openings take cards; restock refills bands towards their recorded size), a chase that is
 * gone once hit, category value indexes drifting on the world's tick, and the simulator's own
 * listing fill model. Rates default to the world schema's `dynamics` (what `packbot sim` runs).
 * Pools are rescored from their current contents only when they changed and at most every
 * `rescore_minutes`, like a bot that refreshes its catalog a few times an hour.
 */
import type { Band, PackPool, PoolCard, RiskLevel } from '../api/schemas.js';
import { DAY_MS, HOUR_MS } from '../core/clock.js';
import { applyRate, roundHalfAway, toCents } from '../core/money.js';
import { Rng } from '../core/prng.js';
import { fillRatePerDay } from '../market/dynamics.js';
import { UniformBag } from '../market/sampler.js';
import { type Dynamics, DynamicsSpec, type Rules, RulesSpec } from '../market/world-schema.js';
import { decideListing } from '../strategy/decide-listing.js';
import { compareRows, type ScoreRow, scorePools } from '../strategy/score.js';
import type { BacktestModel } from './model.js';
import { type Listing, type PathMarket, STEP_CONTINUE, STEP_SOLD, STEP_SOLD_BACK } from './path-market.js';

export type DynamicsInput = Partial<Dynamics> & { rescore_minutes?: number };

const LOCK_MS = 7 * DAY_MS;

interface BandTemplate {
  band: Band;
  minCents: number;
  maxCents: number;
  sealed: boolean;
  odds: Map<string, number>;
  cards: PoolCard[];
  /** Recorded size: listed cards plus unseen ones (hittable_cards beyond the listed). */
  size: number;
}

interface PackTemplate {
  category: string;
  packType: string;
  bands: BandTemplate[];
  chase: PackPool['chase'];
  /** Model pool index for each risk level of this pack, and the body recorded for it. */
  pools: { index: number; risk: string; body: PackPool }[];
}

const templates = new WeakMap<BacktestModel, PackTemplate[]>();

function packTemplates(model: BacktestModel): PackTemplate[] {
  const cached = templates.get(model);
  if (cached) return cached;
  const byPack = new Map<string, PackTemplate>();
  for (const p of model.pools) {
    const k = `${p.category}/${p.packType}`;
    let t = byPack.get(k);
    if (!t) {
      t = { category: p.category, packType: p.packType, bands: [], chase: null, pools: [] };
      byPack.set(k, t);
    }
    t.pools.push({ index: p.index, risk: p.risk, body: p.body });
    if (!t.chase && p.body.chase) t.chase = p.body.chase;
    for (const b of p.body.bands) {
      let bt = t.bands.find((x) => x.band.bucket_id === b.bucket_id);
      if (!bt) {
        bt = {
          band: b,
          minCents: toCents(b.min_value),
          maxCents: toCents(b.max_value),
          sealed: b.is_consolation,
          odds: new Map(),
          cards: [],
          size: 0,
        };
        t.bands.push(bt);
      }
      bt.odds.set(p.risk, b.odds);
      const seen = new Set(bt.cards.map((c) => c.id));
      for (const c of p.body.cards) if (c.bucket_id === b.bucket_id && !seen.has(c.id)) bt.cards.push(c);
      bt.size = Math.max(bt.size, b.hittable_cards, bt.cards.length);
    }
  }
  const list = [...byPack.values()];
  templates.set(model, list);
  return list;
}

interface BandState {
  t: BandTemplate;
  bag: UniformBag;
  /** Sum of the values of the cards in the bag (cents): the band mean without a scan. */
  sum: number;
}

interface PackState {
  t: PackTemplate;
  bands: BandState[];
  chaseHit: boolean;
  chaseEndsAt: number;
  /** Cards taken or added since the pack was last scored. */
  changes: number;
  /** Whether the pack could be drawn at each of its risk levels when last scored. */
  wasDrawable: boolean;
  cardCount: number;
  /** Expected pull value (summed over risk levels) when last scored. */
  scoredEv: number;
  rows: ScoreRow[];
}

export class DynamicMarket implements PathMarket {
  private readonly dyn: Dynamics;
  private readonly rules: Rules;
  private readonly rescoreMs: number;
  private readonly rng: Rng;
  private readonly packs: PackState[];
  /** Model pool index → [pack, risk]. */
  private readonly poolPack: Int32Array;
  private readonly poolRisk: string[];
  /** Card slot → value (cents), record, band sealed flag. */
  private values: number[] = [];
  private cards: PoolCard[] = [];
  private readonly index = new Map<string, number>();
  private syncedTo: number;
  private nextOpen: number;
  private nextRestock: number;
  private nextTick: number;
  private rowsCache: readonly ScoreRow[] | null = null;
  private rowsAt = Number.NEGATIVE_INFINITY;
  private forceRescore = true;
  private generated = 0;

  constructor(
    private readonly model: BacktestModel,
    seed: number,
    pathIndex: number,
    overrides: DynamicsInput = {},
  ) {
    const { rescore_minutes, ...rates } = overrides;
    this.dyn = DynamicsSpec.parse(rates);
    this.rules = RulesSpec.parse({});
    this.rescoreMs = (rescore_minutes ?? 240) * 60_000;
    // The world's own stream: separate from the path's draws so one cannot shift the other.
    this.rng = new Rng((seed ^ 0x6d2b79f5) >>> 0).fork(pathIndex);
    const tpl = packTemplates(model);
    this.poolPack = new Int32Array(model.pools.length).fill(-1);
    this.poolRisk = model.pools.map((p) => p.risk);
    this.packs = tpl.map((t, pi) => {
      for (const p of t.pools) this.poolPack[p.index] = pi;
      const bands = t.bands.map((bt) => {
        const bag = new UniformBag(Math.max(4, bt.size));
        let sum = 0;
        for (const c of bt.cards) {
          const slot = this.addCard(c, toCents(c.market_value));
          bag.add(slot);
          sum += this.values[slot]!;
        }
        // Unseen cards of a truncated band: values drawn within its bounds, as the simulator does.
        for (let k = bt.cards.length; k < bt.size; k++) {
          const slot = this.generateCard(bt);
          bag.add(slot);
          sum += this.values[slot]!;
        }
        return { t: bt, bag, sum };
      });
      const endsAt = t.chase?.ends_at ? Date.parse(t.chase.ends_at) : Number.POSITIVE_INFINITY;
      let cardCount = 0;
      for (const b of bands) cardCount += b.bag.count;
      return {
        t,
        bands,
        chaseHit: false,
        chaseEndsAt: endsAt,
        changes: 1,
        scoredEv: 0,
        wasDrawable: true,
        cardCount,
        rows: [],
      };
    });
    for (const c of ['pokemon', 'onepiece', 'sports', 'riftbound', 'watches']) this.index.set(c, 1);
    const start = model.startMs;
    this.syncedTo = start;
    this.nextOpen = this.schedule(this.dyn.others_pack_openings_per_hour, start);
    this.nextRestock = this.schedule(this.dyn.restock_cards_per_hour_per_pack * this.packs.length, start);
    this.nextTick = start + this.dyn.tick_seconds * 1000;
  }

  private addCard(card: PoolCard, cents: number): number {
    this.cards.push(card);
    this.values.push(cents);
    return this.cards.length - 1;
  }

  private generateCard(bt: BandTemplate): number {
    const v = bt.minCents + Math.round(this.rng.next() * (bt.maxCents - bt.minCents));
    const card: PoolCard = {
      id: `gen-${++this.generated}`,
      name: bt.sealed ? 'Sealed pack' : 'Card',
      market_value: v / 100,
      bucket_id: bt.band.bucket_id,
    };
    return this.addCard(card, v);
  }

  private schedule(perHour: number, from: number): number {
    return perHour > 0
      ? from + Math.max(1, Math.round(this.rng.exponential(perHour) * HOUR_MS))
      : Number.POSITIVE_INFINITY;
  }

  private chaseActive(p: PackState, now: number): boolean {
    const ch = p.t.chase;
    return ch !== null && !p.chaseHit && ch.probability > 0 && now < p.chaseEndsAt;
  }

  private weight(b: BandState, risk: string): number {
    return b.bag.count > 0 ? (b.t.odds.get(risk) ?? 0) : 0;
  }

  private drawable(p: PackState, risk: string, now: number): boolean {
    if (this.chaseActive(p, now)) return true;
    for (const b of p.bands) if (this.weight(b, risk) > 0) return true;
    return false;
  }

  /**
   * One pull from pack p: chase, else band by renormalised odds, then a card uniformly. Returns
   * the card slot (−1 for the chase, −2 when nothing can be drawn); `lastBand` says where from.
   */
  private lastBand = -1;
  private draw(p: PackState, risk: string, now: number, rng: Rng): number {
    if (this.chaseActive(p, now) && rng.next() < p.t.chase!.probability) {
      p.chaseHit = true;
      p.changes += p.cardCount + 1; // the chase is gone: always worth rescoring
      this.lastBand = -1;
      return -1;
    }
    let total = 0;
    for (const b of p.bands) total += this.weight(b, risk);
    if (!(total > 0)) return -2;
    let x = rng.next() * total;
    let chosen = -1;
    for (let i = 0; i < p.bands.length; i++) {
      const w = this.weight(p.bands[i]!, risk);
      if (w <= 0) continue;
      chosen = i;
      if (x < w) break;
      x -= w;
    }
    const band = p.bands[chosen]!;
    const slot = band.bag.pick(rng);
    band.bag.remove(slot);
    band.sum -= this.values[slot]!;
    p.changes++;
    p.cardCount--;
    this.lastBand = chosen;
    return slot;
  }

  advance(now: number): void {
    while (this.syncedTo < now) {
      const at = Math.min(this.nextOpen, this.nextRestock, this.nextTick);
      if (at > now) break;
      this.syncedTo = at;
      if (at === this.nextTick) {
        const dt = this.dyn.tick_seconds / 86_400;
        const s = this.dyn.value_daily_volatility;
        for (const [c, v] of this.index)
          this.index.set(
            c,
            v *
              Math.exp(
                (this.dyn.value_daily_trend - (s * s) / 2) * dt + s * Math.sqrt(dt) * this.rng.normal(),
              ),
          );
        this.nextTick += this.dyn.tick_seconds * 1000;
      } else if (at === this.nextOpen) {
        this.otherOpening(at);
        this.nextOpen = this.schedule(this.dyn.others_pack_openings_per_hour, at);
      } else {
        this.restock();
        this.nextRestock = this.schedule(this.dyn.restock_cards_per_hour_per_pack * this.packs.length, at);
      }
    }
    this.syncedTo = Math.max(this.syncedTo, now);
  }

  private otherOpening(at: number): void {
    const open = this.packs.filter((p) =>
      p.t.pools.some((x) => x.body.available && this.drawable(p, x.risk, at)),
    );
    if (open.length === 0) return;
    const p = open[this.rng.int(open.length)]!;
    const risks = p.t.pools.map((x) => x.risk);
    const risk =
      risks.includes('standard') && this.rng.next() < 0.6 ? 'standard' : risks[this.rng.int(risks.length)]!;
    this.draw(p, risk, at, this.rng);
  }

  private restock(): void {
    if (this.packs.length === 0) return;
    const p = this.packs[this.rng.int(this.packs.length)]!;
    let gap = 0;
    for (const b of p.bands) gap += Math.max(0, b.t.size - b.bag.count);
    if (gap <= 0) return;
    let x = this.rng.int(gap);
    for (const b of p.bands) {
      const g = Math.max(0, b.t.size - b.bag.count);
      if (x < g) {
        const slot = this.generateCard(b.t);
        b.bag.add(slot);
        b.sum += this.values[slot]!;
        p.changes++;
        p.cardCount++;
        return;
      }
      x -= g;
    }
  }

  /**
   * A pack is rescored when its contents expected value moved by 0.5% (or the chase went, or
   * it became empty) and the rescore interval has passed; other packs keep their rows.
   */
  rows(balanceCents: number, now: number): readonly ScoreRow[] {
    const due = now >= this.rowsAt + this.rescoreMs;
    if (this.rowsCache && !this.forceRescore && !due) return this.rowsCache;
    let changed = this.rowsCache === null;
    for (const p of this.packs) {
      const drawableNow = p.t.pools.some((x) => this.drawable(p, x.risk, now));
      // Only a move of the pool's expected value by 0.5% (or the chase going) is worth a rescore.
      const ev = this.quickEv(p, now);
      const enough = p.changes > p.cardCount || Math.abs(ev - p.scoredEv) > 0.005 * Math.max(1, p.scoredEv);
      if (!(enough && due) && drawableNow === p.wasDrawable && this.rowsCache) continue;
      const bodies = p.t.pools.map((x) => this.body(p, x.body, x.risk as RiskLevel, now));
      p.rows = scorePools(bodies, this.model.strategy, {
        balanceCents,
        maxQuantity: this.model.maxQuantity,
        onSkip: () => {},
      });
      p.changes = 0;
      p.scoredEv = ev;
      p.wasDrawable = drawableNow;
      changed = true;
    }
    if (changed || !this.rowsCache) this.rowsCache = this.packs.flatMap((p) => p.rows).sort(compareRows);
    if (due) this.rowsAt = now;
    this.forceRescore = false;
    return this.rowsCache;
  }

  /** The pricing model's EV (DESIGN.md), summed over the pack's risk levels: a change detector. */
  private quickEv(p: PackState, now: number): number {
    const chase = this.chaseActive(p, now) ? p.t.chase! : null;
    const pc = chase ? chase.probability : 0;
    let total = 0;
    for (const x of p.t.pools) {
      let w = 0;
      let acc = 0;
      for (const b of p.bands) {
        const o = this.weight(b, x.risk);
        if (o <= 0) continue;
        w += o;
        acc += (o * b.sum) / b.bag.count;
      }
      total += (chase ? pc * toCents(chase.card.market_value) : 0) + (w > 0 ? ((1 - pc) * acc) / w : 0);
    }
    return total;
  }

  /** The pool as GET /catalog/packs/pool would return it now. */
  private body(p: PackState, recorded: PackPool, risk: RiskLevel, now: number): PackPool {
    const cards: PoolCard[] = [];
    const bands: Band[] = p.bands.map((b) => {
      const n = b.bag.count;
      const odds = n > 0 ? (b.t.odds.get(risk) ?? 0) : 0;
      if (odds > 0) for (let i = 0; i < n; i++) cards.push(this.cards[b.bag.at(i)]!);
      return { ...b.t.band, odds, hittable_cards: odds > 0 ? n : 0 };
    });
    return {
      ...recorded,
      available: recorded.available && this.drawable(p, risk, now),
      bands,
      chase: this.chaseActive(p, now) ? p.t.chase : null,
      cards,
      total_cards: cards.length,
    };
  }

  nextRefreshAt(now: number): number {
    return Math.max(now + 1, this.rowsAt + this.rescoreMs);
  }

  private readonly undo: number[] = [];
  open(pool: number, qty: number, now: number, rng: Rng, out: Int32Array): number {
    const pi = this.poolPack[pool]!;
    const p = this.packs[pi];
    const modelPool = this.model.pools[pool]!;
    if (!p || !modelPool.body.available) return -1;
    const risk = this.poolRisk[pool]!;
    this.undo.length = 0;
    for (let k = 0; k < qty; k++) {
      const slot = this.draw(p, risk, now, rng);
      if (slot === -2) {
        // All or nothing (spec): the order fails, every pulled card goes back, nothing is charged.
        for (let j = this.undo.length - 2; j >= 0; j -= 2) {
          const s = this.undo[j]!;
          const b = this.undo[j + 1]!;
          if (s === -1) p.chaseHit = false;
          else {
            p.bands[b]!.bag.add(s);
            p.bands[b]!.sum += this.values[s]!;
          }
        }
        this.forceRescore = true;
        return -1;
      }
      this.undo.push(slot, this.lastBand);
      const chase = slot === -1;
      const value = chase ? toCents(p.t.chase!.card.market_value) : this.values[slot]!;
      const sealed = !chase && p.bands[this.lastBand]!.t.sealed;
      out[k] = this.model.plans.planFor(value, sealed);
    }
    // A pack we just emptied is unavailable from now on: the bot would see it at once.
    if (!this.drawable(p, risk, now)) this.forceRescore = true;
    return qty;
  }

  private valueNow(l: Listing): number {
    return roundHalfAway((l.basisCents * (this.index.get(l.category) ?? 1)) / l.anchorIndex);
  }

  list(l: Listing): void {
    l.anchorIndex = this.index.get(l.category) ?? 1;
    l.outcome = 'pending';
  }

  /** Replays `decideListing` at each due time; between decisions the market's fill hazard applies. */
  step(l: Listing, now: number): number {
    if (l.outcome === 'sold') return STEP_SOLD;
    const market = this.valueNow(l);
    const d = decideListing(
      {
        priceCents: l.priceCents,
        listedAt: l.listedAt,
        marketValueCents: market,
        basisValueCents: l.basisCents,
        lockedValueUntil: l.pulledAt + LOCK_MS,
      },
      this.model.strategy,
      now,
    );
    if (d.action === 'delist_and_sell_back') {
      l.amountCents = this.holdValue(l, now);
      l.outcome = 'sold_back';
      return STEP_SOLD_BACK;
    }
    if (d.action === 'reprice') l.priceCents = d.priceCents;
    const until = d.action === 'keep' ? d.until : now;
    // Value moves on the tick, so the hazard is constant until the next tick or decision.
    const segmentEnd = Math.max(now + 1, Math.min(until, this.nextTick));
    const perDay = fillRatePerDay(
      l.priceCents,
      market,
      this.dyn.listing_fills_per_day_at_value,
      this.dyn.listing_price_sensitivity,
    );
    const soldAt = perDay > 0 ? now + this.rng.exponential(perDay) * DAY_MS : Number.POSITIVE_INFINITY;
    if (soldAt < segmentEnd) {
      l.eventAt = soldAt;
      l.outcome = 'sold';
      l.amountCents = l.priceCents - applyRate(l.priceCents, this.rules.seller_fee_rate);
    } else l.eventAt = segmentEnd;
    return STEP_CONTINUE;
  }

  holdValue(l: Listing, now: number): number {
    const basis = now <= l.pulledAt + LOCK_MS ? l.basisCents : this.valueNow(l);
    return applyRate(basis, now <= l.pulledAt + LOCK_MS ? this.rules.locked_rate : this.rules.market_rate);
  }
}
