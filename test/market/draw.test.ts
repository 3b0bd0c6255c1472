/**
 * The simulator's pull draw (`drawPull`) against the pricing model written out plainly: the chase
 * with its probability, else a band by `pickWeighted` over the bands' live odds (from what is left
 * of the chase's uniform when a chase is active), then a card uniformly within the band. Same
 * random stream, same draws, card by card, while bands empty, refill and the draw tables are kept
 * as cards come and go (`putInBand`, `takeFromBand`, `undoDraw`).
 */
import { describe, expect, it } from 'vitest';
import { RISK_LEVELS, type RiskLevel } from '../../src/api/schemas.js';
import { loadWorld } from '../../src/config/world-file.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import {
  bandWeight,
  chaseActive,
  type Draw,
  drawPull,
  generateBandCard,
  type Inventory,
  newDraw,
  type PoolState,
  setDrawTables,
  undoDraw,
} from '../../src/market/inventory.js';
import { buildState } from '../../src/market/state.js';
import { pickWeighted } from '../../src/strategy/market-laws.js';

/** The draw as the model states it, on a copy of the random stream; takes nothing from the pool. */
function reference(inv: Inventory, pool: PoolState, risk: RiskLevel, now: number, rng: Rng) {
  // One uniform: the chase below its probability, else the band from the rest of it (uniform
  // again given no chase).
  let u = rng.next();
  if (chaseActive(pool, now)) {
    const p = pool.chase!.probability;
    if (u < p) return { slot: pool.chase!.slot, band: -1, odds: p };
    u = (u - p) / (1 - p);
  }
  const weights = pool.bands.map((b) => bandWeight(b, risk));
  const t = weights.reduce((a, w) => a + w, 0);
  if (!(t > 0)) return undefined;
  const band = pool.bands[pickWeighted(u * t, weights)]!;
  const slot = band.bag.pick(rng);
  expect(inv.cards[slot]!.band).toBe(band.index);
  return { slot, band: band.index, odds: weights[band.index]! / t };
}

/** A copy of `rng`'s state (the same numbers from here on). */
function twin(rng: Rng): Rng {
  return rng.clone();
}

/** The tables a pool's draw reads, built afresh from its bands. */
function freshTables(pool: PoolState) {
  const copy = { ...pool };
  setDrawTables(copy);
  return { bandOdds: copy.bandOdds, oddsTotal: copy.oddsTotal, emptyBands: copy.emptyBands };
}

describe('drawPull', () => {
  it.each(['collector', 'watch_grail'])(
    'draws as the model states it while %s bands empty and refill',
    (packType) => {
      const now = new VirtualClock().now();
      const state = buildState(loadWorld(), 1, now);
      const inv = state.inv;
      const pool = inv.pools.find((p) => p.spec.pack_type === packType)!;
      const rng = new Rng(7);
      const refill = new Rng(8);
      const taken: Draw[] = [];
      let drawn = 0;
      let emptied = 0;
      for (let round = 0; round < 6; round++) {
        // Draw until the pool is dry, at every risk level in turn (undoing some draws on the way).
        for (let k = 0; ; k++) {
          const risk = RISK_LEVELS[k % RISK_LEVELS.length]!;
          if (!pool.spec.risk_levels.includes(risk)) continue;
          const want = reference(inv, pool, risk, now, twin(rng));
          const got = newDraw();
          const drew = drawPull(inv, pool, risk, now, rng, got);
          expect(drew ? got : undefined).toEqual(want);
          if (!drew) break;
          drawn++;
          if (k % 5 === 4) undoDraw(inv, pool, got);
          else taken.push(got);
          if (pool.emptyBands > 0) emptied++;
          expect({ bandOdds: pool.bandOdds, oddsTotal: pool.oddsTotal, emptyBands: pool.emptyBands }).toEqual(
            freshTables(pool),
          );
        }
        // Some cards come back, and new ones are made, as restock would.
        for (const d of taken.splice(0, taken.length / 2)) undoDraw(inv, pool, d);
        for (const b of pool.bands) if (round % 2 === 0) generateBandCard(inv, pool, b, refill);
        expect(pool.emptyBands).toBe(freshTables(pool).emptyBands);
      }
      expect(drawn).toBeGreaterThan(200);
      expect(emptied).toBeGreaterThan(20);
    },
  );

  it('draws nothing at a risk level the pack does not know', () => {
    const now = new VirtualClock().now();
    const state = buildState(loadWorld(), 1, now);
    const pool = state.inv.pools.find((p) => p.chase === null)!;
    const out = newDraw();
    expect(drawPull(state.inv, pool, 'reckless' as RiskLevel, now, new Rng(1), out)).toBe(false);
    expect(out).toEqual(newDraw());
  });
});
