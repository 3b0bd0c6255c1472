/**
 * Strategies drawn at random from the whole strategy format (src/strategy/strategy-schema.ts), so
 * that agreement is checked where nobody looked rather than on the shipped three. Strategy i of
 * seed S is a function of (S, i) and the worlds' catalogue only: `--strategies 3` draws the first
 * three of `--strategies 40`. Each draw is written as YAML and read back through the loader's own
 * parse and validation (what `packbot backtest --strategy` does with the file `--out` writes), and
 * must fit every world's snapshot (`strategyMisfit`, as the backtest command checks); a draw that
 * does not is drawn again from the same stream.
 */
import { stringify } from 'yaml';
import { CATEGORIES, RISK_LEVELS } from '../src/api/schemas.js';
import type { SnapshotFile } from '../src/api/snapshot-schema.js';
import { strategyMisfit } from '../src/backtest/run/strategy-fit.js';
import { parseSource, validateSource } from '../src/config/load.js';
import { Rng } from '../src/core/prng.js';
import { STRATEGY_FORMAT, type Strategy, StrategyFile } from '../src/strategy/strategy-schema.js';
import type { Belief } from './worlds.js';

export interface DrawnStrategy {
  /** `r01`, `r02`, … (random) or a hand-picked case's name. */
  id: string;
  strategy: Strategy;
  /** The file as `--out` writes it; reading it back gives `strategy`. */
  yaml: string;
}

/** Most attempts at one strategy before the drawer is taken to be broken (a fit is the rule). */
const MAX_ATTEMPTS = 200;

/** Strategy `index` (from 0) of `seed`: its own stream, whatever the other draws. */
export function drawStrategy(
  seed: number,
  index: number,
  snapshots: readonly SnapshotFile[],
  beliefs: readonly Belief[],
): DrawnStrategy {
  const rng = new Rng((Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
  const id = `r${String(index + 1).padStart(2, '0')}`;
  const shop = shopCards(snapshots[0]!);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const raw = {
      format: STRATEGY_FORMAT,
      name: `agreement-${seed}-${id}`,
      description: `drawn by the agreement harness: seed ${seed}, strategy ${index + 1}`,
      ...drawRaw(rng, snapshots[0]!, shop, beliefs),
    };
    const drawn = fromRaw(id, raw, `seed ${seed}, strategy ${index + 1}`);
    if (drawn && snapshots.every((s) => strategyMisfit(drawn.strategy, s) === null)) return drawn;
  }
  throw new Error(`agreement: no valid strategy drawn in ${MAX_ATTEMPTS} attempts (seed ${seed}, ${id})`);
}

export function drawStrategies(
  n: number,
  seed: number,
  snapshots: readonly SnapshotFile[],
  beliefs: readonly Belief[],
): DrawnStrategy[] {
  return Array.from({ length: n }, (_, i) => drawStrategy(seed, i, snapshots, beliefs));
}

/**
 * The strategy of `raw` as the loader reads its YAML, or null when the schema refuses it (a
 * combination the drawer should not have made: drawn again).
 */
function fromRaw(id: string, raw: Record<string, unknown>, origin: string): DrawnStrategy | null {
  const yaml =
    `# ${id}: ${origin} (npm run agreement; docs/backtest.md, "Agreement harness")\n` +
    stringify(raw, { lineWidth: 0 });
  try {
    return { id, strategy: validateSource(parseSource(yaml, `${id}.yaml`), StrategyFile), yaml };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The draws. Numbers are rounded as a person would write them (and as YAML keeps them exactly).

const round = (x: number, step: number): number => Math.round(Math.round(x / step) * step * 1e6) / 1e6;
const chance = (rng: Rng, p: number): boolean => rng.next() < p;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)]!;
const uniform = (rng: Rng, lo: number, hi: number): number => lo + (hi - lo) * rng.next();
const logUniform = (rng: Rng, lo: number, hi: number): number =>
  Math.exp(uniform(rng, Math.log(lo), Math.log(hi)));
const intIn = (rng: Rng, lo: number, hi: number): number => lo + rng.int(hi - lo + 1);

/** A non-empty subset, in the list's order: all of it a third of the time, else each at p = 1/2. */
function subset<T>(rng: Rng, xs: readonly T[]): T[] {
  if (chance(rng, 1 / 3)) return [...xs];
  const out = xs.filter(() => chance(rng, 0.5));
  return out.length > 0 ? out : [pick(rng, xs)];
}

/** Sets `key` unless the draw leaves it out (a tenth of the time): the default must hold too. */
function put(rng: Rng, into: Record<string, unknown>, key: string, value: unknown): void {
  if (!chance(rng, 0.1)) into[key] = value;
}

interface ShopCard {
  id: string;
  name: string;
  priceUsd: number;
  grading: string | null;
}

function shopCards(snapshot: SnapshotFile): ShopCard[] {
  return (snapshot.shop ?? []).flatMap((s) =>
    s.cards.map((c) => ({
      id: c.id,
      name: c.name,
      priceUsd: c.price,
      grading: typeof c.grading_company === 'string' ? c.grading_company : null,
    })),
  );
}

function drawRaw(
  rng: Rng,
  snapshot: SnapshotFile,
  shop: readonly ShopCard[],
  beliefs: readonly Belief[],
): Record<string, unknown> {
  const categories = subset(rng, CATEGORIES);
  const risks = subset(rng, RISK_LEVELS);
  const inScope = snapshot.pools.filter(
    (p) =>
      (categories as readonly string[]).includes(p.category) &&
      (risks as readonly string[]).includes(p.risk_level),
  );
  const types = [...new Set(inScope.map((p) => p.pack_type))];
  const packs: Record<string, unknown> = { categories, risk_levels: risks };
  if (types.length > 0 && chance(rng, 0.2)) packs.include = [pick(rng, types)];
  if (types.length > 1 && chance(rng, 0.2)) packs.exclude = [pick(rng, types)];
  // The daily cap is drawn as packs a day (1 to the API's 100) at the price of a pack in scope.
  const refPrice = inScope.length > 0 ? pick(rng, inScope).price : 25;
  const open = drawOpen(rng);
  const budget = drawBudget(rng, refPrice);
  const sell = drawSell(rng, beliefs);
  const cards = drawCards(rng, shop);
  // Fields added to the format after the rest are drawn after it: a seed keeps drawing the
  // strategies it drew before, each with the new field beside.
  put(rng, sell.list as Record<string, unknown>, 'reprice_band', pick(rng, [0, 0.01, 0.05, 0.2]));
  return { packs, open, budget, sell, cards };
}

function drawOpen(rng: Rng): Record<string, unknown> {
  const open: Record<string, unknown> = {};
  // Most pools realize 0.7-0.9 of their price: a ratio above that opens little, so most draws stay below.
  const ratio = rng.next();
  put(
    rng,
    open,
    'min_ev_ratio',
    ratio < 0.1 ? 0 : round(ratio < 0.65 ? uniform(rng, 0.5, 0.9) : uniform(rng, 0.9, 1.3), 0.01),
  );
  put(rng, open, 'max_quantity', intIn(rng, 1, 10));
  // Kelly never opens a negative edge, and few pools have an edge: fixed sizing opens more.
  put(rng, open, 'sizing', chance(rng, 0.6) ? 'fixed' : 'kelly');
  put(rng, open, 'kelly_fraction', round(uniform(rng, 0.05, 1), 0.05));
  put(rng, open, 'allow_estimated', chance(rng, 0.7));
  put(rng, open, 'max_ev_gap_ratio', pick(rng, [0.5, 0.5, 1, 0.2]));
  put(rng, open, 'cooldown_seconds', chance(rng, 0.7) ? 0 : pick(rng, [30, 300, 1800, 7200]));
  return open;
}

function drawBudget(rng: Rng, refPrice: number): Record<string, unknown> {
  const daily = Math.max(1, Math.round(Math.round(logUniform(rng, 1, 100)) * refPrice));
  const budget: Record<string, unknown> = {};
  put(rng, budget, 'max_daily_spend_usd', daily);
  put(rng, budget, 'max_total_spend_usd', Math.round(daily * logUniform(rng, 0.5, 20)));
  put(rng, budget, 'min_balance_usd', pick(rng, [0, 100, Math.round(logUniform(rng, 100, 9000))]));
  put(rng, budget, 'stop_loss_usd', Math.round(logUniform(rng, 50, 10_000)));
  put(rng, budget, 'kill_switch', chance(rng, 0.04));
  return budget;
}

/** Very high thresholds sell every pull back (nothing is listed); 5 lists nearly every card. */
const THRESHOLDS = [5, 10, 25, 50, 100, 250, 1000, 100_000, 100_000];

function drawSell(rng: Rng, beliefs: readonly Belief[]): Record<string, unknown> {
  const markup = round(uniform(rng, 1, 2), 0.01);
  const list: Record<string, unknown> = {};
  put(rng, list, 'markup', markup);
  put(rng, list, 'max_days', pick(rng, [0.5, 1, 2, 3, 5, 7, 10, 14]));
  // The world refuses a price at or below 1 USD: a lower minimum would be a strategy that cannot run.
  put(rng, list, 'min_price_usd', pick(rng, [1, 1, 2, 5]));
  put(rng, list, 'only_when_better', chance(rng, 0.7));
  put(rng, list, 'reprice_every_hours', pick(rng, [1, 6, 12, 24, 48]));
  put(rng, list, 'markup_step', pick(rng, [0, 0.05, 0.1, 0.2]));
  put(rng, list, 'min_markup', round(uniform(rng, 1, markup), 0.01));
  put(rng, list, 'lock_margin_minutes', pick(rng, [0, 30, 60, 240]));
  // A world's own market (with two worlds, each a third of the time), else one of its own.
  const b = beliefs[rng.int(beliefs.length + 1)];
  if (b) {
    list.seller_fee_rate = b.seller_fee_rate;
    list.fill = {
      model: 'hazard',
      fills_per_day_at_value: b.fills_per_day_at_value,
      price_sensitivity: b.price_sensitivity,
    };
    list.value_drift = { daily_volatility: b.daily_volatility, daily_trend: b.daily_trend };
  } else {
    list.seller_fee_rate = pick(rng, [0, 0.05, 0.1]);
    list.fill = drawFill(rng);
    list.value_drift = {
      daily_volatility: pick(rng, [0, 0.01, 0.02, 0.05, 0.1]),
      daily_trend: pick(rng, [0, 0, -0.01, 0.005]),
    };
  }
  const sell: Record<string, unknown> = {};
  put(rng, sell, 'threshold_usd', pick(rng, THRESHOLDS));
  put(rng, sell, 'sealed_value_fraction', round(rng.next(), 0.05));
  sell.list = list;
  return sell;
}

/** Every fill model the schema allows (`FillModel`), with its own parameters. */
function drawFill(rng: Rng): Record<string, unknown> {
  switch (pick(rng, ['hazard', 'logistic', 'piecewise'] as const)) {
    case 'hazard':
      return {
        model: 'hazard',
        fills_per_day_at_value: round(logUniform(rng, 0.05, 5), 0.01),
        price_sensitivity: round(uniform(rng, 0, 8), 0.1),
      };
    case 'logistic':
      return {
        model: 'logistic',
        midpoint: round(uniform(rng, 1, 2), 0.05),
        steepness: round(uniform(rng, 1, 12), 0.5),
        max_fill: round(uniform(rng, 0.3, 1), 0.05),
      };
    case 'piecewise': {
      const n = intIn(rng, 1, 4);
      let r = round(uniform(rng, 0.9, 1.2), 0.05);
      let p = round(uniform(rng, 0.5, 1), 0.05);
      const points: [number, number][] = [];
      for (let i = 0; i < n; i++) {
        points.push([r, p]);
        r = round(r + uniform(rng, 0.1, 0.4), 0.05);
        p = round(p * uniform(rng, 0.3, 0.9), 0.05);
      }
      return { model: 'piecewise', points };
    }
  }
}

function drawCards(rng: Rng, shop: readonly ShopCard[]): Record<string, unknown> {
  if (!chance(rng, 0.35)) return chance(rng, 0.5) ? {} : { enabled: false };
  const cards: Record<string, unknown> = { enabled: true };
  put(rng, cards, 'categories', subset(rng, CATEGORIES));
  put(rng, cards, 'min_edge_ratio', round(uniform(rng, 1, 1.5), 0.01));
  put(rng, cards, 'max_price_usd', Math.round(logUniform(rng, 10, 1000)));
  put(rng, cards, 'max_per_day', intIn(rng, 0, 20));
  put(rng, cards, 'max_daily_spend_usd', Math.round(logUniform(rng, 20, 3000)));
  put(rng, cards, 'exit', pick(rng, ['list', 'hold', 'sell_back']));
  if (shop.length > 0 && chance(rng, 0.3)) {
    const card = pick(rng, shop);
    const limit = round(card.priceUsd * uniform(rng, 0.8, 1.2), 0.01);
    if (chance(rng, 0.5)) cards.watchlist = [{ card_id: card.id, max_price_usd: limit }];
    else {
      const word = pick(
        rng,
        card.name
          .split(/\s+/)
          .filter((w) => w.length > 2)
          .concat(card.name),
      );
      const entry: Record<string, unknown> = { name: word, max_price_usd: limit };
      if (card.grading && chance(rng, 0.5)) {
        entry.grading_company = card.grading;
        entry.min_grade = intIn(rng, 5, 10);
      }
      cards.watchlist = [entry];
    }
  }
  return cards;
}

// ---------------------------------------------------------------------------------------------
// Hand-picked cases, beside the random ones.

/**
 * `heavy-seller`: balanced opening hard and selling every pull back (daily 2,500 USD, total
 * 20,000 USD, threshold 100,000 USD). It drains the pools it opens faster than any random draw is
 * likely to, which is where a scorer that rescored the pools late would promise the pools as they
 * were rather than as its own orders left them.
 */
export function handPicked(balanced: Record<string, unknown>): DrawnStrategy[] {
  const b = balanced as { budget: object; sell: object };
  const raw = {
    ...balanced,
    name: 'agreement-heavy-seller',
    description: 'balanced with daily 2500 USD, total 20000 USD, every pull sold back',
    budget: { ...b.budget, max_daily_spend_usd: 2500, max_total_spend_usd: 20_000 },
    sell: { ...b.sell, threshold_usd: 100_000 },
  };
  const drawn = fromRaw('heavy-seller', raw, 'hand-picked: strategies/balanced.yaml, opening hard');
  if (!drawn) throw new Error('agreement: the hand-picked heavy-seller strategy does not validate');
  return [drawn];
}
