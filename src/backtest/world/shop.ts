/**
 * The shop in the dynamic backtest, from the snapshot's recorded stock (`shop`, snapshot v2): the
 * laws the simulator's shop follows (src/market/inventory.ts, dynamics.ts), over the recorded
 * cards instead of a world file's generator:
 * - a card's price moves with its category's value index: its value is its recorded value moved
 *   by the index (the simulator's `cardValue`), its price that value times its own recorded
 *   price/value ratio (the simulator's `shopPrice`: value × the category's markup);
 * - other buyers (`others_shop_purchases_per_hour`): per tick a Poisson count, each taking one
 *   card, its category in proportion to the categories' stock, then a card uniformly (the
 *   simulator's `otherShopPurchase`);
 * - restock (`shop_restock_fraction_per_hour`): per tick each category regains that share of its
 *   gap to its recorded size (`refillShare`, `refillCount`); a new card is a copy of a recorded
 *   card of the category drawn uniformly (the simulator draws a fresh value from the category's
 *   range: the recorded stock stands for that range), at its recorded value in today's money.
 * Which cards to buy is the strategy's scorer (`scoreShopCard`) at the current price and value.
 */

import { CARD_FEE_USD } from '../../api/rules.js';
import type { ShopCard } from '../../api/schemas.js';
import type { SnapshotFile } from '../../api/snapshot-schema.js';
import { roundHalfAway, toCents } from '../../core/money.js';
import { Rng } from '../../core/prng.js';
import type { Dynamics } from '../../market/world-schema.js';
import { cardRealizableCents, scoreShopCard, watches } from '../../strategy/card-score.js';
import { listingLife } from '../../strategy/listing-life.js';
import {
  bandGap,
  NO_CHOICE,
  pickByStock,
  poissonCount,
  refillCount,
  refillShare,
  type SellBackRules,
  sellBackAmount,
} from '../../strategy/market-laws.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { ShopOffer } from '../path/path-market.js';
import { slotOf, type ValueDrift } from './value-drift.js';

/** Salt of the shop's random stream (apart from the path's, the world's and the drift's). */
const SHOP_STREAM_SALT = 0x1b873593;
/** How often the bot reads the shop and buys (a full sync), when `card_sync_minutes` is not given. */
export const DEFAULT_CARD_SYNC_MINUTES = 15;

/** A recorded shop card, and what the strategy makes of it that does not depend on its price. */
interface TemplateCard {
  card: ShopCard;
  /** The same card as a restock copy (another id: a watchlist entry by card id does not match it). */
  copy: ShopCard;
  valueCents: number;
  priceCents: number;
  /** Recorded price / recorded value (NaN for a card recorded at value 0: its price stays). */
  ratio: number;
  /** The watchlist entry the card (and its copy) matches, or -1. */
  watch: number;
  copyWatch: number;
  /** Above this value (cents) the card cannot reach the edge at its ratio (`hopeUpTo`). */
  hopeUpTo: number;
}

interface TemplateCategory {
  name: string;
  /** The category's value index slot (value-drift.ts `slotOf`; negative: none). */
  slot: number;
  /** Whether the strategy buys here. */
  buys: boolean;
  cards: TemplateCard[];
  /** Least recorded value (cents), and the most any card's `hopeUpTo` is (∞ with a watched card). */
  minValue: number;
  hopeUpTo: number;
}

const templates = new WeakMap<SnapshotFile, WeakMap<Strategy, TemplateCategory[]>>();

function shopTemplates(snapshot: SnapshotFile, strategy: Strategy): TemplateCategory[] {
  let byStrategy = templates.get(snapshot);
  if (!byStrategy) {
    byStrategy = new WeakMap();
    templates.set(snapshot, byStrategy);
  }
  const cached = byStrategy.get(strategy);
  if (cached) return cached;
  const watchOf = (card: ShopCard) => strategy.cards.watchlist.findIndex((w) => watches(w, card));
  const buys = new Set<string>(strategy.cards.categories);
  const yieldBound = realizableBound(strategy);
  const edge = strategy.cards.min_edge_ratio;
  const list = (snapshot.shop ?? []).map((s): TemplateCategory => {
    const cards = s.cards.map((card): TemplateCard => {
      const valueCents = toCents(card.market_value);
      const priceCents = toCents(card.price);
      const copy = { ...card, id: `${card.id}~restock` };
      const ratio = valueCents > 0 ? priceCents / valueCents : Number.NaN;
      return {
        card,
        copy,
        valueCents,
        priceCents,
        ratio,
        watch: watchOf(card),
        copyWatch: watchOf(copy),
        hopeUpTo: hopeUpTo(ratio, edge, yieldBound),
      };
    });
    let minValue = Number.POSITIVE_INFINITY;
    let hope = 0;
    for (const c of cards) {
      minValue = Math.min(minValue, c.valueCents);
      hope = Math.max(hope, c.watch >= 0 || c.copyWatch >= 0 ? Number.POSITIVE_INFINITY : c.hopeUpTo);
    }
    return {
      name: s.category,
      slot: slotOf(s.category),
      buys: buys.has(s.category),
      cards,
      minValue,
      hopeUpTo: hope,
    };
  });
  byStrategy.set(strategy, list);
  return list;
}

/**
 * A bound on what the exit realizes per cent of value, whatever the price: 1 (hold; selling back
 * pays 0.8 of at most the value), or the listing's best expected yield over the bases the lock can
 * take (its grid is linear between points 0.02 apart: sampled at 0.001, with 1% to spare).
 */
const bounds = new WeakMap<Strategy, number>();
function realizableBound(strategy: Strategy): number {
  let b = bounds.get(strategy);
  if (b === undefined) {
    b = 1;
    if (strategy.cards.exit === 'list')
      for (let k = 0; k <= 1000; k++) b = Math.max(b, listingLife(strategy, k / 1000).expectedYield * 1.01);
    bounds.set(strategy, b);
  }
  return b;
}

/**
 * The value (cents) above which a card priced at `ratio` × its value cannot meet the edge: its
 * price is at least ratio × value − ½ (rounding), what it realizes at most bound × value + 1
 * (roundings), so edge × (ratio × value − ½) > bound × value + 1 rules it out once
 * value × (edge × ratio − bound) > 1 + edge (the fee only helps). ∞: no value rules it out.
 */
function hopeUpTo(ratio: number, edge: number, bound: number): number {
  const margin = edge * ratio - bound;
  return Number.isNaN(ratio) || !(margin > 0) ? Number.POSITIVE_INFINITY : (1 + edge) / margin;
}

/**
 * Whether `priceCents` is at or under the price at which the edge reaches `min_edge_ratio`
 * (`highestPriceCents`, the bound `scoreShopCard` compares with) for a card worth `valueCents`:
 * that search finds where realizable − ratio × (price + fee) turns negative, which it does once
 * (realizable grows by at most 0.8 of a cent per cent of price, the cost by ratio ≥ 1), and
 * looks no higher than 4 × value; so one evaluation at the price answers as the search would.
 */
function withinEdge(strategy: Strategy, valueCents: number, priceCents: number, feeCents: number): boolean {
  if (priceCents > Math.max(1, 4 * valueCents)) return false;
  return (
    cardRealizableCents(valueCents, priceCents, strategy) >=
    strategy.cards.min_edge_ratio * (priceCents + feeCents)
  );
}

/** One category's stock on a path: parallel arrays, the first `n` entries live. */
interface Stock {
  t: TemplateCategory;
  n: number;
  /** Recorded size: what restock fills back to. */
  size: number;
  /** Template card (index into t.cards), the index the value is anchored to, copy or not, handle. */
  tpl: Int32Array;
  anchor: Float64Array;
  copy: Uint8Array;
  serial: Int32Array;
  /** The largest anchor any card has had (values are at least minValue × index / maxAnchor). */
  maxAnchor: number;
}

/** The shop on one path (see the file comment). Advanced by the dynamic market on its tick. */
export class Shop {
  /** The shop's own random stream: other buyers, restock, and the fill draws of bought cards' listings. */
  readonly rng: Rng;
  private readonly stock: Stock[];
  private nextSerial = 0;
  /** Bumped whenever a price or the stock changes: offers are recomputed only then. */
  private version = 0;
  private offersVersion = -1;
  private offerList: ShopOffer[] = [];
  private readonly cap: number;
  /** The fee the scorer counts (the spec's), whatever the world charges. */
  private readonly scorerFee = toCents(CARD_FEE_USD);

  constructor(
    snapshot: SnapshotFile,
    private readonly strategy: Strategy,
    private readonly dyn: Dynamics,
    /** The world's value drift: its category indexes move the shop's values (`indexNow`). */
    private readonly drift: ValueDrift,
    seed: number,
    pathIndex: number,
  ) {
    this.rng = new Rng((seed ^ SHOP_STREAM_SALT) >>> 0).fork(pathIndex);
    this.cap = toCents(strategy.cards.max_price_usd);
    this.stock = shopTemplates(snapshot, strategy).map((t) => {
      const size = t.cards.length;
      const s: Stock = {
        t,
        n: size,
        size,
        tpl: new Int32Array(size),
        anchor: new Float64Array(size).fill(1),
        copy: new Uint8Array(size),
        serial: new Int32Array(size),
        maxAnchor: 1,
      };
      for (let i = 0; i < size; i++) {
        s.tpl[i] = i;
        s.serial[i] = this.nextSerial++;
      }
      return s;
    });
  }

  /** Cards in the shop, all categories. */
  get count(): number {
    let n = 0;
    for (const s of this.stock) n += s.n;
    return n;
  }

  /** Stock of each recorded category (snapshot order). */
  counts(): number[] {
    return this.stock.map((s) => s.n);
  }

  /**
   * Other users' purchases over a tick of `dtHours`: a Poisson count; each takes a card of a
   * category drawn in proportion to the categories' stock, then one of its cards uniformly.
   */
  othersBuy(dtHours: number): void {
    const k = poissonCount(this.dyn.others_shop_purchases_per_hour, dtHours, this.rng);
    if (k === 0) return;
    const sizes = this.stock.map((s) => s.n);
    for (let i = 0; i < k; i++) {
      const c = pickByStock(sizes, this.rng);
      if (c === NO_CHOICE) break;
      const s = this.stock[c]!;
      this.takeAt(s, this.rng.int(s.n));
      sizes[c] = s.n;
    }
    this.version++;
  }

  /** Restock over a tick of `dtHours`, after the tick's value drift (new cards anchor to it). */
  restock(dtHours: number): void {
    const share = refillShare(this.dyn.shop_restock_fraction_per_hour, dtHours);
    if (share > 0)
      for (const s of this.stock) {
        const add = refillCount(bandGap(s.size, s.n), share, this.rng);
        for (let i = 0; i < add; i++) {
          const at = s.n++;
          s.tpl[at] = this.rng.int(s.t.cards.length);
          s.anchor[at] = this.indexOf(s);
          if (s.anchor[at]! > s.maxAnchor) s.maxAnchor = s.anchor[at]!;
          s.copy[at] = 1;
          s.serial[at] = this.nextSerial++;
        }
      }
    // The tick moved the values (and so the prices) whether or not anything arrived.
    this.version++;
  }

  private takeAt(s: Stock, i: number): void {
    const last = --s.n;
    s.tpl[i] = s.tpl[last]!;
    s.anchor[i] = s.anchor[last]!;
    s.copy[i] = s.copy[last]!;
    s.serial[i] = s.serial[last]!;
  }

  private indexOf(s: Stock): number {
    return s.t.slot < 0 ? 1 : this.drift.indexNow(s.t.slot);
  }

  /** Value (cents) of entry i of stock s now: its recorded value moved by the index since its anchor. */
  private valueAt(s: Stock, i: number): number {
    const c = s.t.cards[s.tpl[i]!]!;
    return roundHalfAway((c.valueCents * this.indexOf(s)) / s.anchor[i]!);
  }

  /** Price (cents) of entry i at value `valueCents`: the value times the card's recorded ratio. */
  private priceAt(s: Stock, i: number, valueCents: number): number {
    const c = s.t.cards[s.tpl[i]!]!;
    return Number.isNaN(c.ratio) ? c.priceCents : roundHalfAway(valueCents * c.ratio);
  }

  /** The shop as `GET /catalog/cards` would list it now (every category, current prices). */
  listing(): { category: string; cards: ShopCard[] }[] {
    return this.stock.map((s) => {
      const cards: ShopCard[] = [];
      for (let i = 0; i < s.n; i++) cards.push(this.cardAt(s, i));
      return { category: s.t.name, cards };
    });
  }

  private cardAt(s: Stock, i: number, value = this.valueAt(s, i)): ShopCard {
    const c = s.t.cards[s.tpl[i]!]!;
    const card = s.copy[i] === 1 ? c.copy : c.card;
    return { ...card, price: this.priceAt(s, i, value) / 100, market_value: value / 100 };
  }

  /**
   * The cards whose `scoreShopCard` decision is 'buy' now: those a watchlist entry wants first
   * (the user asked for them), then best edge first (`edge_ratio` as the scorer rounds it), then
   * by card id. Exactly the scorer's buys (tested against `scoreShop` on the shop's own listing)
   * without running it on every card: a watched card at or under its limit, or one at or under
   * both `max_price_usd` and its edge price (`withinEdge`). `buy` asks the scorer itself.
   */
  offers(): readonly ShopOffer[] {
    if (this.offersVersion === this.version) return this.offerList;
    const strategy = this.strategy;
    const watchlist = strategy.cards.watchlist;
    const fee = this.scorerFee;
    const out: ShopOffer[] = [];
    for (const s of this.stock) {
      if (!s.t.buys) continue;
      // A shop priced above any edge (the usual case): no card of it can be a buy.
      if ((s.t.minValue * this.indexOf(s)) / s.maxAnchor > s.t.hopeUpTo * 1.001) continue;
      for (let i = 0; i < s.n; i++) {
        const c = s.t.cards[s.tpl[i]!]!;
        const watch = s.copy[i] === 1 ? c.copyWatch : c.watch;
        const value = this.valueAt(s, i);
        if (watch < 0 && value > c.hopeUpTo) continue;
        const price = this.priceAt(s, i, value);
        if (watch >= 0) {
          if (price > toCents(watchlist[watch]!.max_price_usd)) continue;
        } else if (price > this.cap || !withinEdge(strategy, value, price, fee)) continue;
        const edge = cardRealizableCents(value, price, strategy) / (price + fee);
        out.push({
          serial: s.serial[i]!,
          category: s.t.name,
          cardId: (s.copy[i] === 1 ? c.copy : c.card).id,
          priceCents: price,
          valueCents: value,
          maxPriceCents: 0,
          edge: Math.round(edge * 1e6) / 1e6,
          watched: watch >= 0,
        });
      }
    }
    out.sort(
      (a, b) =>
        Number(b.watched) - Number(a.watched) ||
        b.edge - a.edge ||
        (a.cardId < b.cardId ? -1 : a.cardId > b.cardId ? 1 : 0),
    );
    this.offerList = out;
    this.offersVersion = this.version;
    return out;
  }

  /**
   * Our purchase of an offer: the scorer (`scoreShopCard`) is asked about the card as the shop
   * shows it now; on 'buy' its `maxPriceCents` (the purchase's `max_price`) is set on the offer
   * and the card leaves the shop. False, and nothing changes, if the card is gone or the scorer
   * skips it or its price is above that limit (none of which `offers` lets happen).
   */
  buy(offer: ShopOffer): boolean {
    for (const s of this.stock) {
      if (s.t.name !== offer.category) continue;
      for (let i = 0; i < s.n; i++) {
        if (s.serial[i] !== offer.serial) continue;
        const row = scoreShopCard(this.cardAt(s, i), s.t.name, this.strategy);
        if (row.decision.action !== 'buy' || offer.priceCents > row.decision.maxPriceCents) return false;
        offer.maxPriceCents = row.decision.maxPriceCents;
        this.takeAt(s, i);
        this.version++;
        return true;
      }
    }
    return false;
  }
}

/** What selling a bought card back pays at once (the purchase's locked basis, `sellBackAmount`). */
export function boughtSellBack(
  at: number,
  basisCents: number,
  valueCents: number,
  rules: SellBackRules,
): number {
  return sellBackAmount('purchase', at, basisCents, valueCents, at, rules);
}
