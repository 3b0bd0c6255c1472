/**
 * The dynamic market, per path: the snapshot's packs with depletable bands (our pulls and other
 * users' openings take cards; restock refills bands towards their recorded size), a chase that is
 * gone once hit, category value indexes drifting on the world's tick, and the simulator's own
 * listing fill model. Rates default to the world schema's `dynamics` (what `packbot sim` runs).
 * Pools are rescored from their current contents only when they changed and at most every
 * `rescore_minutes`, like a bot that refreshes its catalog a few times an hour.
 */
import type { Band, PackPool, PoolCard } from '../api/schemas.js';
import { DAY_MS, HOUR_MS } from '../core/clock.js';
import { applyRate, roundHalfAway, toCents } from '../core/money.js';
import { Rng } from '../core/prng.js';
import { fillRatePerDay } from '../market/dynamics.js';
import { UniformBag } from '../market/sampler.js';
import { type Dynamics, DynamicsSpec, type Rules, RulesSpec } from '../market/world-schema.js';
import { decideListing } from '../strategy/decide-listing.js';
import { IncrementalScorer } from '../strategy/incremental-score.js';
import { compareRows, type ScoreRow } from '../strategy/score.js';
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

/** The pool a risk level's scorer stands for: its recorded body with the pack's merged bands. */
function scorerTemplate(t: PackTemplate, x: PackTemplate['pools'][number]): PackPool {
  return {
    ...x.body,
    bands: t.bands.map((b) => ({ ...b.band, odds: b.odds.get(x.risk) ?? 0 })),
    cards: [],
    total_cards: 0,
  };
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
  /** Card slot (per pack) → value (cents); slots of cards gone for good are reused. */
  values: number[];
  free: number[];
  /** Band odds per risk level (t.pools order), by band. */
  odds: Float64Array[];
  /** Per risk level: bands holding a card with odds > 0 (drawable without a scan). */
  live: Int32Array;
  /** Position of the 'standard' risk level in t.pools, −1 if none. */
  standard: number;
  /** Incremental scorers (one per distinct price), fed every card change. */
  scorers: IncrementalScorer[];
  /** Per risk level: its scorer and the pool it stands for (available/chase set when scoring). */
  riskScorer: Int32Array;
  views: PackPool[];
  chaseHit: boolean;
  chaseEndsAt: number;
  /** Cards taken or added since the pack was last scored. */
  changes: number;
  /** Whether the pack could be drawn at each of its risk levels when last scored. */
  wasDrawable: boolean;
  cardCount: number;
  /** Σ over bands of max(0, recorded size − cards): the restock gap, kept on every put/take. */
  gap: number;
  /** Expected pull value (summed over risk levels) when last scored. */
  scoredEv: number;
  rows: ScoreRow[];
}

/** A pack's recorded (listed) cards, scored once per model: paths start from copies. */
interface PackStart {
  values: number[];
  /** Slots of each band's listed cards, in order. */
  bandSlots: number[][];
  scorers: IncrementalScorer[];
  riskScorer: Int32Array;
}

const starts = new WeakMap<BacktestModel, PackStart[]>();

function packStarts(model: BacktestModel): PackStart[] {
  const cached = starts.get(model);
  if (cached) return cached;
  const list = packTemplates(model).map((t) => {
    const prices: number[] = [];
    const scorers: IncrementalScorer[] = [];
    const riskScorer = new Int32Array(t.pools.length);
    t.pools.forEach((x, r) => {
      const price = toCents(x.body.price);
      let i = prices.indexOf(price);
      if (i < 0) {
        i = prices.length;
        prices.push(price);
        scorers.push(new IncrementalScorer(scorerTemplate(t, x), model.strategy));
      }
      riskScorer[r] = i;
    });
    const values: number[] = [];
    const bandSlots = t.bands.map((bt, bi) =>
      bt.cards.map((c) => {
        const slot = values.length;
        values.push(toCents(c.market_value));
        for (const s of scorers) s.add(bi, slot, values[slot]!);
        return slot;
      }),
    );
    return { values, bandSlots, scorers, riskScorer };
  });
  starts.set(model, list);
  return list;
}

export class DynamicMarket implements PathMarket {
  private readonly dyn: Dynamics;
  private readonly rules: Rules;
  private readonly rescoreMs: number;
  private readonly rng: Rng;
  private readonly packs: PackState[];
  /** Model pool index → pack, and position of its risk level in the pack's pools. */
  private readonly poolPack: Int32Array;
  private readonly poolRisk: Int32Array;
  private readonly index = new Map<string, number>();
  private syncedTo: number;
  private nextOpen: number;
  private nextRestock: number;
  private nextTick: number;
  private rowsCache: readonly ScoreRow[] | null = null;
  private rowsAt = Number.NEGATIVE_INFINITY;
  private forceRescore = true;

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
    const begin = packStarts(model);
    this.poolPack = new Int32Array(model.pools.length).fill(-1);
    this.poolRisk = new Int32Array(model.pools.length).fill(-1);
    this.packs = tpl.map((t, pi) => {
      t.pools.forEach((p, r) => {
        this.poolPack[p.index] = pi;
        this.poolRisk[p.index] = r;
      });
      const st = begin[pi]!;
      const odds = t.pools.map((x) => Float64Array.from(t.bands, (b) => b.odds.get(x.risk) ?? 0));
      const p: PackState = {
        t,
        bands: [],
        values: st.values.slice(),
        free: [],
        odds,
        live: new Int32Array(t.pools.length),
        standard: t.pools.findIndex((x) => x.risk === 'standard'),
        scorers: st.scorers.map((s) => {
          const c = s.clone();
          // decideOpen never reads a row's growth: only the decision computes it (same decisions).
          c.growthOnDemand = false;
          return c;
        }),
        riskScorer: st.riskScorer,
        views: t.pools.map((x) => scorerTemplate(t, x)),
        chaseHit: false,
        chaseEndsAt: t.chase?.ends_at ? Date.parse(t.chase.ends_at) : Number.POSITIVE_INFINITY,
        changes: 1,
        scoredEv: 0,
        wasDrawable: true,
        cardCount: 0,
        gap: 0,
        rows: [],
      };
      t.bands.forEach((bt, bi) => {
        const bag = new UniformBag(Math.max(4, bt.size));
        const band: BandState = { t: bt, bag, sum: 0 };
        for (const slot of st.bandSlots[bi]!) {
          bag.add(slot);
          band.sum += p.values[slot]!;
        }
        p.bands.push(band);
        if (bag.count > 0) this.liveChange(p, bi, 1);
        // Unseen cards of a truncated band: values drawn within its bounds, as the simulator does.
        for (let k = bt.cards.length; k < bt.size; k++) this.put(p, bi, this.generateCard(p, bt));
      });
      p.gap = 0;
      for (const b of p.bands) {
        p.cardCount += b.bag.count;
        p.gap += Math.max(0, b.t.size - b.bag.count);
      }
      return p;
    });
    for (const c of ['pokemon', 'onepiece', 'sports', 'riftbound', 'watches']) this.index.set(c, 1);
    const start = model.startMs;
    this.syncedTo = start;
    this.nextOpen = this.schedule(this.dyn.others_pack_openings_per_hour, start);
    this.nextRestock = this.schedule(this.dyn.restock_cards_per_hour_per_pack * this.packs.length, start);
    this.nextTick = start + this.dyn.tick_seconds * 1000;
  }

  private newSlot(p: PackState, cents: number): number {
    const slot = p.free.pop();
    if (slot === undefined) {
      p.values.push(cents);
      return p.values.length - 1;
    }
    p.values[slot] = cents;
    return slot;
  }

  private generateCard(p: PackState, bt: BandTemplate): number {
    return this.newSlot(p, bt.minCents + Math.round(this.rng.next() * (bt.maxCents - bt.minCents)));
  }

  /** Band bi of pack p went from empty to not (+1) or back (−1). */
  private liveChange(p: PackState, bi: number, d: number): void {
    this.openDirty = true;
    for (let r = 0; r < p.odds.length; r++) if (p.odds[r]![bi]! > 0) p.live[r] = p.live[r]! + d;
  }

  /** A card enters band `bi` of pack p: its bag, its sum and the pack's scorers. */
  private put(p: PackState, bi: number, slot: number): void {
    const band = p.bands[bi]!;
    band.bag.add(slot);
    const n = band.bag.count;
    if (n === 1) this.liveChange(p, bi, 1);
    if (n <= band.t.size) p.gap--;
    const v = p.values[slot]!;
    band.sum += v;
    const scorers = p.scorers;
    for (let i = 0; i < scorers.length; i++) scorers[i]!.add(bi, slot, v);
  }

  /** A card leaves band `bi` (its slot stays valid until released to `free`). */
  private take(p: PackState, bi: number, slot: number): void {
    const band = p.bands[bi]!;
    band.bag.remove(slot);
    const n = band.bag.count;
    if (n === 0) this.liveChange(p, bi, -1);
    if (n < band.t.size) p.gap++;
    band.sum -= p.values[slot]!;
    const scorers = p.scorers;
    for (let i = 0; i < scorers.length; i++) scorers[i]!.remove(bi, slot);
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

  /** Whether pack p can be drawn at risk level r (position in its pools). */
  private drawable(p: PackState, r: number, now: number): boolean {
    return p.live[r]! > 0 || this.chaseActive(p, now);
  }

  /**
   * One pull from pack p at risk level r: chase, else band by renormalised odds, then a card
   * uniformly. Returns the card slot (−1 for the chase, −2 when nothing can be drawn); `lastBand`
   * says where from.
   */
  private lastBand = -1;
  private draw(p: PackState, r: number, now: number, rng: Rng): number {
    if (this.chaseActive(p, now) && rng.next() < p.t.chase!.probability) {
      p.chaseHit = true;
      this.openDirty = true;
      p.changes += p.cardCount + 1; // the chase is gone: always worth rescoring
      this.lastBand = -1;
      return -1;
    }
    const odds = p.odds[r]!;
    const bands = p.bands;
    let total = 0;
    for (let i = 0; i < bands.length; i++) total += bands[i]!.bag.count > 0 ? odds[i]! : 0;
    if (!(total > 0)) return -2;
    let x = rng.next() * total;
    let chosen = -1;
    for (let i = 0; i < bands.length; i++) {
      const w = bands[i]!.bag.count > 0 ? odds[i]! : 0;
      if (w <= 0) continue;
      chosen = i;
      if (x < w) break;
      x -= w;
    }
    const slot = bands[chosen]!.bag.pick(rng);
    this.take(p, chosen, slot);
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
        this.refillBands(dt * 24);
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

  private openToOthers(p: PackState, at: number): boolean {
    const pools = p.t.pools;
    for (let r = 0; r < pools.length; r++)
      if (pools[r]!.body.available && this.drawable(p, r, at)) return true;
    return false;
  }

  /**
   * Packs open to other users, in pack order: recomputed only when a band empties or refills, a
   * chase is hit (or given back), or a chase's end time passes — the only ways it can change.
   */
  private openList = new Int32Array(0);
  private openCount = 0;
  private openDirty = true;
  private openValidUntil = Number.NEGATIVE_INFINITY;
  private refreshOpenList(at: number): void {
    if (this.openList.length < this.packs.length) this.openList = new Int32Array(this.packs.length);
    let n = 0;
    let until = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.packs.length; i++) {
      const p = this.packs[i]!;
      if (this.openToOthers(p, at)) this.openList[n++] = i;
      if (p.chaseEndsAt > at && p.chaseEndsAt < until) until = p.chaseEndsAt;
    }
    this.openCount = n;
    this.openDirty = false;
    this.openValidUntil = until;
  }

  private otherOpening(at: number): void {
    if (this.openDirty || at >= this.openValidUntil) this.refreshOpenList(at);
    const open = this.openCount;
    if (open === 0) return;
    const p = this.packs[this.openList[this.rng.int(open)]!]!;
    const n = p.t.pools.length;
    const r = p.standard >= 0 && this.rng.next() < 0.6 ? p.standard : this.rng.int(n);
    const slot = this.draw(p, r, at, this.rng);
    if (slot >= 0) p.free.push(slot);
  }

  /**
   * The simulator's tick refill (src/market/dynamics.ts `restock`): each band regains the share
   * 1 − e^(−rate·dt) of its gap to its recorded size, rounded stochastically, on top of the
   * Poisson trickle of `restock()`. Without it backtests restocked slower than `packbot sim`.
   */
  private refillBands(dtHours: number): void {
    const rate = this.dyn.restock_fraction_per_hour;
    if (!(rate > 0)) return;
    const share = 1 - Math.exp(-rate * dtHours);
    for (const p of this.packs) {
      if (p.gap <= 0) continue;
      for (let bi = 0; bi < p.bands.length; bi++) {
        const b = p.bands[bi]!;
        const gap = b.t.size - b.bag.count;
        if (gap <= 0) continue;
        const expected = gap * share;
        const whole = Math.floor(expected);
        const n = Math.min(gap, whole + (this.rng.next() < expected - whole ? 1 : 0));
        for (let i = 0; i < n; i++) {
          this.put(p, bi, this.generateCard(p, b.t));
          p.changes++;
          p.cardCount++;
        }
      }
    }
  }

  private restock(): void {
    if (this.packs.length === 0) return;
    const p = this.packs[this.rng.int(this.packs.length)]!;
    const gap = p.gap;
    if (gap <= 0) return;
    let x = this.rng.int(gap);
    for (let bi = 0; bi < p.bands.length; bi++) {
      const b = p.bands[bi]!;
      const g = Math.max(0, b.t.size - b.bag.count);
      if (x < g) {
        this.put(p, bi, this.generateCard(p, b.t));
        p.changes++;
        p.cardCount++;
        return;
      }
      x -= g;
    }
  }

  /**
   * A pack is rescored when its contents expected value moved by 0.5% (or the chase went, or
   * it became empty) and the rescore interval has passed; other packs keep their rows. Rows come
   * from the packs' incremental scorers: the rows `scorePools` gives on the pools as they are now.
   */
  rows(balanceCents: number, now: number): readonly ScoreRow[] {
    const due = now >= this.rowsAt + this.rescoreMs;
    if (this.rowsCache && !this.forceRescore && !due) return this.rowsCache;
    let changed = this.rowsCache === null;
    const ctx = { balanceCents, maxQuantity: this.model.maxQuantity };
    for (const p of this.packs) {
      let drawableNow = false;
      for (let r = 0; r < p.t.pools.length; r++) if (this.drawable(p, r, now)) drawableNow = true;
      // Only a move of the pool's expected value by 0.5% (or the chase going) is worth a rescore.
      const ev = this.quickEv(p, now);
      const enough = p.changes > p.cardCount || Math.abs(ev - p.scoredEv) > 0.005 * Math.max(1, p.scoredEv);
      if (!(enough && due) && drawableNow === p.wasDrawable && this.rowsCache) continue;
      const chase = this.chaseActive(p, now) ? p.t.chase : null;
      const rows: ScoreRow[] = [];
      for (let r = 0; r < p.t.pools.length; r++) {
        const view = p.views[r]!;
        view.available = p.t.pools[r]!.body.available && this.drawable(p, r, now);
        view.chase = chase;
        const row = p.scorers[p.riskScorer[r]!]!.rowFor(view, ctx);
        if (row) rows.push(row);
      }
      p.rows = rows.sort(compareRows);
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
    for (let r = 0; r < p.t.pools.length; r++) {
      const odds = p.odds[r]!;
      let w = 0;
      let acc = 0;
      for (let i = 0; i < p.bands.length; i++) {
        const b = p.bands[i]!;
        const o = b.bag.count > 0 ? odds[i]! : 0;
        if (o <= 0) continue;
        w += o;
        acc += (o * b.sum) / b.bag.count;
      }
      total += (chase ? pc * toCents(chase.card.market_value) : 0) + (w > 0 ? ((1 - pc) * acc) / w : 0);
    }
    return total;
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
    const r = this.poolRisk[pool]!;
    this.undo.length = 0;
    for (let k = 0; k < qty; k++) {
      const slot = this.draw(p, r, now, rng);
      if (slot === -2) {
        // All or nothing (spec): the order fails, every pulled card goes back, nothing is charged.
        for (let j = this.undo.length - 2; j >= 0; j -= 2) {
          const s = this.undo[j]!;
          const b = this.undo[j + 1]!;
          if (s === -1) {
            p.chaseHit = false;
            this.openDirty = true;
          } else this.put(p, b, s);
        }
        this.forceRescore = true;
        return -1;
      }
      this.undo.push(slot, this.lastBand);
      const chase = slot === -1;
      const value = chase ? toCents(p.t.chase!.card.market_value) : p.values[slot]!;
      const sealed = !chase && p.bands[this.lastBand]!.t.sealed;
      out[k] = this.model.plans.planFor(value, sealed);
    }
    for (let j = 0; j < this.undo.length; j += 2) if (this.undo[j]! >= 0) p.free.push(this.undo[j]!);
    // A pack we just emptied is unavailable from now on: the bot would see it at once.
    if (!this.drawable(p, r, now)) this.forceRescore = true;
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
