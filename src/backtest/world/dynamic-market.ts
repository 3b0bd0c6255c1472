/**
 * The dynamic market, per path: the snapshot's packs with depletable bands (our pulls and other
 * users' openings take cards; restock refills bands towards their recorded size), a chase that is
 * gone once hit, category value indexes drifting on the world's tick, and the simulator's own
 * listing fill model. Rates default to the world schema's `dynamics` (what `packbot sim` runs).
 * Pools are rescored from their current contents only when they changed and at most every
 * `rescore_minutes`, like a bot that refreshes its catalog a few times an hour.
 *
 * This file runs the tick and takes our orders; its parts are the world's layout
 * (world-layout.ts), its packs on the path (world-pools.ts), the value drift (value-drift.ts,
 * shared with the shop: shop.ts), the rescoring policy (rescoring.ts) and the listings' lives
 * (listing-resolution.ts).
 */
import { HOUR_MS } from '../../core/clock.js';
import { toCents } from '../../core/money.js';
import type { Rng } from '../../core/prng.js';
import { type Dynamics, DynamicsSpec, type Rules, RulesSpec } from '../../market/world-schema.js';
import { poissonCount } from '../../strategy/market-laws.js';
import type { ScoreRow } from '../../strategy/score.js';
import type { CardsSetup } from '../path/cards-setup.js';
import type { BacktestModel } from '../path/model.js';
import type { DrawParts, Listing, PathMarket, ShopMarket, ShopOffer } from '../path/path-market.js';
import { ListingResolver } from './listing-resolution.js';
import { Rescorer } from './rescoring.js';
import { boughtSellBack, DEFAULT_CARD_SYNC_MINUTES, Shop } from './shop.js';
import { CATEGORY_SLOT, ValueDrift } from './value-drift.js';
import { DRAW_CHASE, DRAW_NOTHING, NO_BAND, NO_CARD, WorldPools } from './world-pools.js';

/** Where a caller keeps the world of its last path for the next one (see DynamicMarket's `reuse`). */
export interface WorldReuse {
  world: WorldPools | null;
}

export type DynamicsInput = Partial<Dynamics> & { rescore_minutes?: number; card_sync_minutes?: number };

/** `open`'s answer when the order fails (PathMarket's contract). */
const ORDER_FAILED = -1;
/** Rescore interval when `rescore_minutes` is not given. */
const DEFAULT_RESCORE_MINUTES = 240;

interface Settings {
  dyn: Dynamics;
  rules: Rules;
  rescoreMs: number;
  cardSyncMs: number;
}

const settingsCache = new WeakMap<DynamicsInput, Settings>();
const NO_OVERRIDES: DynamicsInput = {};

/** Rates validated once per overrides object, not per path (validation is costly). */
function settingsFor(overrides: DynamicsInput): Settings {
  const cached = settingsCache.get(overrides);
  if (cached) return cached;
  const { rescore_minutes, card_sync_minutes, ...rates } = overrides;
  const s = {
    dyn: DynamicsSpec.parse(rates),
    rules: RulesSpec.parse({}),
    rescoreMs: (rescore_minutes ?? DEFAULT_RESCORE_MINUTES) * 60_000,
    cardSyncMs: Math.max(1, card_sync_minutes ?? DEFAULT_CARD_SYNC_MINUTES) * 60_000,
  };
  settingsCache.set(overrides, s);
  return s;
}

const readCache = new WeakMap<BacktestModel, number[]>();

/**
 * The categories whose value index a path can read from the start (slots): its pools' (listings),
 * and every category when the shop is backtested (its cards'). Any other is drawn when first read.
 */
function readCategories(model: BacktestModel, cards: CardsSetup | null): number[] {
  if (cards?.backtested) return [...CATEGORY_SLOT.values()];
  let slots = readCache.get(model);
  if (!slots) {
    const set = new Set<number>();
    for (const p of model.pools) {
      const c = CATEGORY_SLOT.get(p.category);
      if (c !== undefined) set.add(c);
    }
    slots = [...set].sort((a, b) => a - b);
    readCache.set(model, slots);
  }
  return slots;
}

export class DynamicMarket implements PathMarket {
  /** The world's rates (the validated `dynamics`). */
  private readonly dyn: Dynamics;
  /** The API's money rules (seller fee, sell-back rates). */
  private readonly rules: Rules;
  /** The packs' cards on this path, other users' openings, arrivals and refill (world-pools.ts). */
  private readonly world: WorldPools;
  /** The category value indexes (value-drift.ts), shared with the shop. */
  private readonly drift: ValueDrift;
  /** When pools are rescored (rescoring.ts; tests read its counts and switch its proofs off). */
  readonly rescorer: Rescorer;
  /** Listings' lives and values (listing-resolution.ts). */
  private readonly listings: ListingResolver;
  /** The path's start (ms): tick k is at start + k · tickMs. */
  private readonly start: number;
  /** The world's tick (ms). */
  private readonly tickMs: number;
  /** When the next tick is due (ms). */
  private nextTick: number;
  /**
   * When the packs' next tick is due (ms; at most `nextTick`): the packs take their ticks when
   * something reads them (`settle`), not in `advance`, so the ticks after the last read of a path
   * are never drawn. They have their own random stream, and nothing but our orders (each made
   * after a read) changes them between reads, so when they move does not change how.
   */
  private packsTick: number;
  /**
   * Scratch reused by every order (no allocation per order): `open`'s pulls so far as (id, band)
   * pairs, to put back if the order fails (band NO_BAND: the chase).
   */
  private readonly undo: number[] = [];
  /**
   * No pack will be opened or scored again on this path (`rowsUnread`): nothing reads the packs'
   * cards any more, and the world's pools have their own random stream, so they stop moving.
   */
  private poolsIdle = false;
  /** The shop (cards enabled and recorded; see shop.ts), and its side of PathMarket. */
  private readonly shopWorld: Shop | null = null;
  readonly shop: ShopMarket | null = null;

  constructor(
    private readonly model: BacktestModel,
    seed: number,
    pathIndex: number,
    overrides: DynamicsInput = NO_OVERRIDES,
    cards: CardsSetup | null = null,
    /**
     * The world of the caller's previous path, restarted for this one (`WorldPools.restart`), and
     * then this path's: for a caller that runs paths one after the other and drops each market
     * when its path ends (the engine's `runPathShared`). Without it the world is made afresh.
     */
    reuse?: WorldReuse,
  ) {
    const settings = settingsFor(overrides);
    this.dyn = settings.dyn;
    this.rules = settings.rules;
    this.tickMs = this.dyn.tick_seconds * 1000;
    const old = reuse?.world;
    this.world = old
      ? old.restart(model, this.dyn, seed, pathIndex)
      : new WorldPools(model, this.dyn, seed, pathIndex);
    if (reuse) reuse.world = this.world;
    this.drift = new ValueDrift(this.dyn, this.tickMs, seed, pathIndex, readCategories(model, cards));
    this.rescorer = new Rescorer(model, this.world, settings.rescoreMs);
    this.start = model.startMs;
    this.listings = new ListingResolver(model, this.rules, this.dyn, this.drift, this.start, this.tickMs);
    this.nextTick = this.start + this.tickMs;
    this.packsTick = this.nextTick;
    if (cards?.backtested) {
      const shop = new Shop(model.snapshot, model.strategy, this.dyn, this.drift, seed, pathIndex);
      this.shopWorld = shop;
      this.shop = {
        syncMs: settings.cardSyncMs,
        feeCents: toCents(this.rules.card_fee),
        dailyCountCap: this.rules.card_daily_count_cap,
        dailySpendCapCents: toCents(this.rules.card_daily_spend_cap),
        sellBackNow: (basis: number, value: number, at: number) =>
          boughtSellBack(at, basis, value, this.rules),
        offers: () => shop.offers(),
        buy: (offer: ShopOffer) => shop.buy(offer),
        listCard: (l: Listing, now: number) => this.list(l, now, shop.rng),
        anchor: (l: Listing) => {
          l.anchorIndex = this.listings.indexOf(l);
        },
        valueNow: (l: Listing) => this.valueNow(l),
      };
    }
  }

  /** The shop on this path (tests read its stock); null when cards are not backtested. */
  get shopState(): Shop | null {
    return this.shopWorld;
  }

  /**
   * The world moves on its tick (an hour by default), not event by event: at each tick the
   * hour's other-user openings (a Poisson count, each drawn from the joint law of one opening,
   * their cards taken band by band), the hour's card arrivals (a Poisson count per pack with a
   * gap) and the simulator's band refill (the new cards' values drawn band by band), and the value
   * drift. Between ticks the world's pools stand still (our own pulls still take cards at once).
   * The simulator applies openings and arrivals at exponential times instead; counts per hour
   * have the same Poisson law, only their order within the hour differs (docs/backtest.md).
   * The packs' part of a tick is drawn when they are next read (`settle`), the rest here.
   */
  advance(now: number): void {
    const step = this.tickMs;
    const dtHours = step / HOUR_MS;
    while (this.nextTick <= now) {
      const at = this.nextTick;
      this.shopWorld?.othersBuy(dtHours);
      const k = Math.round((at - this.start) / step);
      this.drift.moveTo(k);
      this.shopWorld?.restock(dtHours);
      this.nextTick += step;
    }
  }

  /**
   * The packs' ticks up to the last one `advance` passed (the hour's other-user openings, then
   * arrivals and refill; see `advance`), then their cards made known (`WorldPools.settle`), for a
   * read of the packs: rows, our orders.
   */
  private settle(): void {
    if (this.poolsIdle) return;
    const dtHours = this.tickMs / HOUR_MS;
    const world = this.world;
    while (this.packsTick < this.nextTick) {
      world.otherOpenings(
        poissonCount(this.dyn.others_pack_openings_per_hour, dtHours, world.rng),
        this.packsTick,
      );
      world.restock(this.dyn.restock_cards_per_hour_per_pack, dtHours);
      this.packsTick += this.tickMs;
    }
    world.settle();
  }

  rows(balanceCents: number, now: number): readonly ScoreRow[] {
    this.settle();
    return this.rescorer.rows(balanceCents, now);
  }

  rowsAsLast(balanceCents: number, now: number): readonly ScoreRow[] {
    // The first rows of a path are made afresh (`rowsAsLast` then calls `rows`).
    if (!this.rescorer.hasRows) this.settle();
    return this.rescorer.rowsAsLast(balanceCents, now);
  }

  rowsUnread(now: number): void {
    this.rescorer.unread(now);
    this.poolsIdle = true;
  }

  /** The pull law `open` draws from now: the chase, else a band by live odds, a card uniformly. */
  drawParts(pool: number, now: number, out: DrawParts): void {
    this.settle();
    this.world.drawParts(pool, now, out, this.model.plans);
  }

  nextRefreshAt(now: number): number {
    return this.rescorer.nextRefreshAt(now);
  }

  open(pool: number, qty: number, now: number, rng: Rng, out: Int32Array): number {
    this.settle();
    const world = this.world;
    const pi = world.poolPack[pool]!;
    const p = world.packs[pi];
    const modelPool = this.model.pools[pool]!;
    if (!p || !modelPool.body.available) return ORDER_FAILED;
    const r = world.poolRisk[pool]!;
    this.undo.length = 0;
    for (let k = 0; k < qty; k++) {
      const band = world.drawBand(p, r, now, rng);
      if (band === DRAW_NOTHING) {
        // All or nothing (spec): the order fails, every pulled card goes back, nothing is charged.
        for (let j = this.undo.length - 2; j >= 0; j -= 2) world.putBack(p, this.undo[j + 1]!, this.undo[j]!);
        // The bot re-reads the pools after a refunded order (PackOpener onFailed): so does this.
        this.rescorer.forceRescore = true;
        p.mustRescore = true;
        return ORDER_FAILED;
      }
      if (band === DRAW_CHASE) {
        this.undo.push(NO_CARD, NO_BAND);
        out[k] = this.model.plans.planFor(toCents(p.t.chase!.card.market_value), false);
        continue;
      }
      const g = p.b0 + band;
      const id = world.pullFrom(p, band, rng);
      this.undo.push(id, band);
      out[k] = world.planOf(g, id);
    }
    // A pack we just emptied is unavailable from now on: the bot would see it at once.
    if (!world.drawable(p, r, now)) this.rescorer.forceRescore = true;
    return qty;
  }

  /** What listing l's card is worth now (its value at acquisition moved by its category's index). */
  valueNow(l: Listing): number {
    return this.listings.valueNow(l);
  }

  /** A new listing's whole life, decided at once (listing-resolution.ts). */
  list(l: Listing, now: number, rng: Rng): void {
    this.listings.list(l, now, rng);
  }

  /** What selling listing l's card back would pay at `now` (equity's mark). */
  holdValue(l: Listing, now: number): number {
    return this.listings.holdValue(l, now);
  }
}
