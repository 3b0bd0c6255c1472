/**
 * The agreement harness's strategy drawer (agreement/draw.ts): every draw is a valid strategy that
 * fits both worlds, a seed always draws the same strategies, and over many draws every field of
 * the format and every choice of each is drawn, so the harness checks the whole format and not the
 * corner the shipped strategies sit in. A field added to the format fails here until it is drawn.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type DrawnStrategy, drawStrategies, drawStrategy, handPicked } from '../../agreement/draw.js';
import { type AgreementWorld, agreementWorlds, beliefOf, believes } from '../../agreement/worlds.js';
import { CATEGORIES, RISK_LEVELS } from '../../src/api/schemas.js';
import { strategyMisfit } from '../../src/backtest/run/strategy-fit.js';
import { parseSource, validateSource } from '../../src/config/load.js';
import { defaultStrategy, StrategyFile } from '../../src/strategy/strategy-schema.js';

const MANY = 400;

let worlds: AgreementWorld[];
let draws: DrawnStrategy[];
const draw = (n: number, seed: number) =>
  drawStrategies(
    n,
    seed,
    worlds.map((w) => w.snapshot),
    worlds.map((w) => beliefOf(w.world)),
  );

beforeAll(async () => {
  worlds = await agreementWorlds();
  draws = draw(MANY, 3);
});

/** Every key path of a parsed YAML object, array items under `[]`. */
function keyPaths(x: unknown, prefix = '', out = new Set<string>()): Set<string> {
  if (Array.isArray(x)) for (const v of x) keyPaths(v, `${prefix}[]`, out);
  else if (x !== null && typeof x === 'object')
    for (const [k, v] of Object.entries(x)) {
      const p = prefix ? `${prefix}.${k}` : k;
      out.add(p);
      keyPaths(v, p, out);
    }
  return out;
}

describe('the strategy drawer', () => {
  it('draws strategies the loader reads back as drawn, fitting both worlds', () => {
    for (const d of draws) {
      const read = validateSource(parseSource(d.yaml, `${d.id}.yaml`), StrategyFile);
      expect(read, d.id).toEqual(d.strategy);
      for (const w of worlds)
        expect(strategyMisfit(d.strategy, w.snapshot), `${d.id} on ${w.name}`).toBeNull();
    }
  });

  it('draws the same strategies for a seed, strategy i whatever the count, other ones for another seed', () => {
    const a = draw(6, 11).map((d) => d.yaml);
    expect(draw(6, 11).map((d) => d.yaml)).toEqual(a);
    const snapshots = worlds.map((w) => w.snapshot);
    const beliefs = worlds.map((w) => beliefOf(w.world));
    expect(drawStrategy(11, 4, snapshots, beliefs).yaml).toBe(a[4]);
    expect(draw(3, 11).map((d) => d.yaml)).toEqual(a.slice(0, 3));
    const b = draw(6, 12).map((d) => d.yaml);
    for (let i = 0; i < 6; i++) expect(b[i]).not.toBe(a[i]);
    expect(new Set(a).size).toBe(6);
  });

  it('draws every field of the format, each left out too (its default) except the market beliefs', () => {
    const drawn = new Set<string>();
    for (const d of draws) for (const p of keyPaths(parse(d.yaml))) drawn.add(p);
    // Every field a strategy has (the defaults fill them all) is written by some draw.
    const fields = [...keyPaths(JSON.parse(JSON.stringify(defaultStrategy())))];
    expect(fields.filter((f) => !drawn.has(f))).toEqual([]);
    // The other fill models' fields and a watchlist entry's.
    for (const f of [
      'sell.list.fill.midpoint',
      'sell.list.fill.steepness',
      'sell.list.fill.max_fill',
      'sell.list.fill.points',
      'cards.watchlist[].card_id',
      'cards.watchlist[].name',
      'cards.watchlist[].grading_company',
      'cards.watchlist[].min_grade',
      'cards.watchlist[].max_price_usd',
    ])
      expect(drawn.has(f), f).toBe(true);
    // A field left out takes its default: each of these is absent from some draw.
    for (const f of [
      'open.max_quantity',
      'budget.max_daily_spend_usd',
      'sell.threshold_usd',
      'sell.list.markup',
    ])
      expect(
        draws.some((d) => !keyPaths(parse(d.yaml)).has(f)),
        f,
      ).toBe(true);
  });

  it("covers every choice: packs, sizing, caps up to 100 packs a day, thresholds, fill models, cards' exits", () => {
    const s = draws.map((d) => d.strategy);
    const some = (what: string, f: (x: (typeof s)[number]) => boolean) => expect(s.some(f), what).toBe(true);
    for (const c of CATEGORIES) some(`category ${c}`, (x) => x.packs.categories.includes(c));
    for (const r of RISK_LEVELS) some(`risk level ${r} alone`, (x) => x.packs.risk_levels.join() === r);
    some('include', (x) => x.packs.include.length > 0);
    some('exclude', (x) => x.packs.exclude.length > 0);
    some('min_ev_ratio 0', (x) => x.open.min_ev_ratio === 0);
    some('min_ev_ratio above 1.2', (x) => x.open.min_ev_ratio > 1.2);
    some('max_quantity 1', (x) => x.open.max_quantity === 1);
    some('max_quantity 10', (x) => x.open.max_quantity === 10);
    for (const z of ['kelly', 'fixed'] as const) some(`sizing ${z}`, (x) => x.open.sizing === z);
    some('kelly_fraction 1', (x) => x.open.kelly_fraction === 1);
    some('kelly_fraction below 0.2', (x) => x.open.kelly_fraction < 0.2);
    some('no estimated pools', (x) => !x.open.allow_estimated);
    some('a cool-down', (x) => x.open.cooldown_seconds > 0);
    some('the gap check off', (x) => x.open.max_ev_gap_ratio === 1);
    // The daily cap at 100 packs of the priciest pack in scope, and at a pack or two of the cheapest.
    some('a daily cap of 100 packs', (x) => x.budget.max_daily_spend_usd >= 100 * 250);
    some('a daily cap of a pack or two', (x) => x.budget.max_daily_spend_usd <= 30);
    some(
      'a total cap below the daily one',
      (x) => x.budget.max_total_spend_usd < x.budget.max_daily_spend_usd,
    );
    some('a total cap of 15 days', (x) => x.budget.max_total_spend_usd > 15 * x.budget.max_daily_spend_usd);
    some('a large reserve', (x) => x.budget.min_balance_usd > 5000);
    some('no reserve', (x) => x.budget.min_balance_usd === 0);
    some('a tight stop-loss', (x) => x.budget.stop_loss_usd < 100);
    some('the kill switch', (x) => x.budget.kill_switch);
    some('every pull sold back', (x) => x.sell.threshold_usd >= 100_000);
    some('nearly every pull listed', (x) => x.sell.threshold_usd <= 5);
    some('markup 2', (x) => x.sell.list.markup >= 1.95);
    some('markup near 1', (x) => x.sell.list.markup <= 1.05);
    some('listings of half a day', (x) => x.sell.list.max_days < 1);
    some('listings beyond the 7-day lock', (x) => x.sell.list.max_days > 7);
    some('listing even when worse', (x) => !x.sell.list.only_when_better);
    some('no repricing step', (x) => x.sell.list.markup_step === 0);
    some('hourly repricing', (x) => x.sell.list.reprice_every_hours === 1);
    some('repricing at any move', (x) => x.sell.list.reprice_band === 0);
    some('a wide repricing band', (x) => x.sell.list.reprice_band >= 0.2);
    for (const m of ['hazard', 'logistic', 'piecewise'] as const)
      some(`fill ${m}`, (x) => x.sell.list.fill.model === m);
    some(
      'a piecewise fill of several points',
      (x) => x.sell.list.fill.model === 'piecewise' && x.sell.list.fill.points.length > 2,
    );
    some('no value drift', (x) => x.sell.list.value_drift.daily_volatility === 0);
    some('a value trend', (x) => x.sell.list.value_drift.daily_trend !== 0);
    some('no seller fee', (x) => x.sell.list.seller_fee_rate === 0);
    for (const w of worlds) some(`the ${w.name} world's market`, (x) => believes(x, w.world));
    some("neither world's market", (x) => worlds.every((w) => !believes(x, w.world)));
    some('cards off', (x) => !x.cards.enabled);
    for (const e of ['list', 'hold', 'sell_back'] as const)
      some(`cards, exit ${e}`, (x) => x.cards.enabled && x.cards.exit === e);
    some('cards, none a day', (x) => x.cards.enabled && x.cards.max_per_day === 0);
    some('a watchlist by card id', (x) => x.cards.watchlist.some((w) => w.card_id !== undefined));
    some('a watchlist by name and grade', (x) => x.cards.watchlist.some((w) => w.min_grade !== undefined));
  });

  it('hand-picks the heavy seller: balanced, 2,500 USD a day, 20,000 in all, every pull sold back', () => {
    const balanced = parse(
      `format: packbot.strategy/v1\nname: balanced\nbudget: {max_daily_spend_usd: 500}\nsell: {threshold_usd: 25}\n`,
    ) as Record<string, unknown>;
    const [h] = handPicked(balanced);
    expect(h!.id).toBe('heavy-seller');
    expect(h!.strategy.budget).toMatchObject({ max_daily_spend_usd: 2500, max_total_spend_usd: 20_000 });
    expect(h!.strategy.sell.threshold_usd).toBe(100_000);
  });
});
