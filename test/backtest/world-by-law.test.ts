/**
 * The dynamic market's world draws other users' openings from their joint law (one draw per
 * opening: pack, chase, risk level and band at once, then whether it takes a known card or a new
 * one), counts a tick's arrivals and refill, and draws which known cards left and the new cards'
 * values only when the world is read (`settle`, world-pools.ts): once at the end here, or after
 * every tick. This checks it against the simulator's event-by-event replay, written here from
 * the laws themselves: one opening after another (a pack among those open, the chase, a risk level,
 * a band by live odds, a card uniformly), then one arrival after another, then each band's refill,
 * each new card's value drawn at once. On a world where openings outpace restock (bands empty, a
 * chase is hit in a few paths in ten) the band counts, Σ values and chase hits after a day agree in
 * mean and variance within four standard errors (fixed seeds).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildModel } from '../../src/backtest/path/model.js';
import { loadSnapshot } from '../../src/backtest/snapshot/load.js';
import { packTemplates } from '../../src/backtest/world/pack-templates.js';
import { worldStart } from '../../src/backtest/world/world-layout.js';
import { WorldPools } from '../../src/backtest/world/world-pools.js';
import { Rng } from '../../src/core/prng.js';
import { DynamicsSpec } from '../../src/market/world-schema.js';
import {
  liveOdds,
  othersRiskLevel,
  pickByGap,
  pickEqual,
  pickWeighted,
  poissonCount,
  pullsChase,
  refillCount,
  refillShare,
} from '../../src/strategy/market-laws.js';
import { strategy } from '../strategy-builder.js';

const snap = loadSnapshot(join(import.meta.dirname, '..', 'fixtures', 'sim-pokemon-snapshot.json'));
// Chases hit often enough to matter, bands that empty (the epic bands: 8 cards).
for (const p of snap.pools) if (p.chase) p.chase = { ...p.chase, probability: 0.01 };
const model = buildModel(snap, strategy({}, { base: 'backtest' }));
/**
 * Two worlds: openings outpacing restock (bands empty, packs close to other users during the
 * day), and restock outpacing openings (a tick's arrivals usually cover the pack's whole gap).
 */
const WORLDS = {
  draining: DynamicsSpec.parse({
    others_pack_openings_per_hour: 40,
    restock_cards_per_hour_per_pack: 1,
    restock_fraction_per_hour: 0.05,
  }),
  refilled: DynamicsSpec.parse({ others_pack_openings_per_hour: 12, restock_cards_per_hour_per_pack: 4 }),
};
type Dyn = (typeof WORLDS)['draining'];
const TICKS = 24;
const PATHS = 1200;

/** Per path: each band's count and Σ value after TICKS ticks, and the chases hit. */
type Outcome = number[];

function byLaw(dyn: Dyn, path: number, readEveryTick: boolean): Outcome {
  const w = new WorldPools(model, dyn, 17, path);
  const at = model.startMs;
  for (let k = 1; k <= TICKS; k++) {
    w.otherOpenings(poissonCount(dyn.others_pack_openings_per_hour, 1, w.rng), at + k * 3_600_000);
    w.restock(dyn.restock_cards_per_hour_per_pack, 1);
    if (readEveryTick) w.settle();
  }
  w.settle();
  return [...w.count, ...w.sum, w.packs.filter((p) => p.chaseHit).length];
}

/** The same world one event after another, as the simulator runs it. */
function oneByOne(dyn: Dyn, path: number): Outcome {
  const tpl = packTemplates(model);
  const st = worldStart(model);
  const rng = new Rng(1_000_003 + path);
  const value = (g: number, id: number) => st.idTerms[2 * (st.valOff[g]! + id)]!;
  const gridCard = (g: number) => st.gridId[st.gridOff[g]! + rng.int(st.gridLen[g]!)]!;
  const cards: number[][] = [];
  for (let g = 0; g < st.count.length; g++) {
    const band = Array.from(st.ids.subarray(st.off[g]!, st.off[g]! + st.count[g]!));
    while (band.length < st.size[g]!) band.push(gridCard(g));
    cards.push(band);
  }
  const hit = tpl.map(() => false);
  const oddsOf = (pi: number, r: number) => {
    const t = tpl[pi]!;
    const b0 = st.packs[pi]!.b0;
    return t.bands.map((b, i) => liveOdds(b.odds.get(t.pools[r]!.risk) ?? 0, cards[b0 + i]!.length));
  };
  const chaseOn = (pi: number) => tpl[pi]!.chase !== null && !hit[pi];
  const drawable = (pi: number, r: number) => chaseOn(pi) || oddsOf(pi, r).some((x) => x > 0);
  const open = (pi: number) => tpl[pi]!.pools.some((x, r) => x.body.available && drawable(pi, r));
  const share = refillShare(dyn.restock_fraction_per_hour, 1);
  for (let k = 1; k <= TICKS; k++) {
    for (let n = poissonCount(dyn.others_pack_openings_per_hour, 1, rng); n > 0; n--) {
      const list = tpl.map((_, pi) => pi).filter(open);
      if (list.length === 0) break;
      const pi = list[pickEqual(list.length, rng)]!;
      if (chaseOn(pi) && pullsChase(rng.next(), tpl[pi]!.chase!.probability)) {
        hit[pi] = true;
        continue;
      }
      const r = othersRiskLevel(tpl[pi]!.pools.length, st.packs[pi]!.standard, rng);
      const odds = oddsOf(pi, r);
      const total = odds.reduce((a, b) => a + b, 0);
      if (!(total > 0)) continue;
      const band = cards[st.packs[pi]!.b0 + pickWeighted(rng.next() * total, odds)]!;
      const at = rng.int(band.length);
      band[at] = band[band.length - 1]!;
      band.pop();
    }
    for (let pi = 0; pi < tpl.length; pi++) {
      const b0 = st.packs[pi]!.b0;
      const nb = tpl[pi]!.bands.length;
      const counts = () => Int32Array.from({ length: nb }, (_, i) => cards[b0 + i]!.length);
      const gapOf = () => counts().reduce((a, c, i) => a + Math.max(0, st.size[b0 + i]! - c), 0);
      if (gapOf() <= 0) continue;
      for (let n = poissonCount(dyn.restock_cards_per_hour_per_pack, 1, rng); n > 0; n--) {
        const gap = gapOf();
        if (gap <= 0) break;
        const bi = pickByGap(rng.int(gap), st.size.subarray(b0, b0 + nb), counts(), 0, nb);
        cards[b0 + bi]!.push(gridCard(b0 + bi));
      }
      for (let bi = 0; bi < nb; bi++) {
        const g = b0 + bi;
        for (let n = refillCount(Math.max(0, st.size[g]! - cards[g]!.length), share, rng); n > 0; n--)
          cards[g]!.push(gridCard(g));
      }
    }
  }
  const sums = cards.map((band, g) => band.reduce((a, id) => a + value(g, id), 0));
  return [...cards.map((b) => b.length), ...sums, hit.filter(Boolean).length];
}

/** Mean, its standard error, variance and the variance's standard error (from the fourth moment). */
function moments(xs: number[]) {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  let m2 = 0;
  let m4 = 0;
  for (const x of xs) {
    m2 += (x - mean) ** 2;
    m4 += (x - mean) ** 4;
  }
  m2 /= n;
  m4 /= n;
  return { mean, seMean: Math.sqrt(m2 / n), variance: m2, seVar: Math.sqrt(Math.max(0, m4 - m2 * m2) / n) };
}

describe("the world's openings, arrivals and refill by law", () => {
  it.each<[keyof typeof WORLDS, string]>([
    ['draining', 'read once, after a day'],
    ['refilled', 'read once, after a day'],
    ['draining', 'read after every tick'],
  ])(
    'agree with the event-by-event replay on band counts, Σ values and chase hits (%s, %s)',
    (world, read) => {
      const dyn = WORLDS[world];
      const a = Array.from({ length: PATHS }, (_, i) => byLaw(dyn, i, read === 'read after every tick'));
      const b = Array.from({ length: PATHS }, (_, i) => oneByOne(dyn, i));
      const width = a[0]!.length;
      let compared = 0;
      for (let j = 0; j < width; j++) {
        const x = moments(a.map((o) => o[j]!));
        const y = moments(b.map((o) => o[j]!));
        if (x.variance === 0 && y.variance === 0) {
          expect(x.mean, `stat ${j}`).toBe(y.mean);
          continue;
        }
        compared++;
        expect(Math.abs(x.mean - y.mean), `mean of stat ${j}`).toBeLessThan(
          4 * Math.hypot(x.seMean, y.seMean),
        );
        expect(Math.abs(x.variance - y.variance), `variance of stat ${j}`).toBeLessThan(
          4 * Math.hypot(x.seVar, y.seVar),
        );
      }
      // The world moved: chases were hit; in the draining world bands emptied.
      expect(compared).toBeGreaterThan(40);
      expect(moments(a.map((o) => o[width - 1]!)).mean).toBeGreaterThan(0.02);
      if (world === 'draining')
        expect(a.some((o) => o.slice(0, (width - 1) / 2).some((c) => c === 0))).toBe(true);
    },
  );
});
