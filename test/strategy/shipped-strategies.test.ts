import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SnapshotFile } from '../../src/api/snapshot-schema.js';
import { InputFileError } from '../../src/config/load.js';
import { loadStrategy } from '../../src/config/strategy-file.js';
import { toCents } from '../../src/core/money.js';
import { scorePools } from '../../src/strategy/score.js';
import { defaultStrategy, STRATEGY_FORMAT, StrategyFile } from '../../src/strategy/strategy-schema.js';

// Pools recorded from `packbot sim` (config/sim.yaml): house-edge packs and one promotional pack.
const snap = SnapshotFile.parse(JSON.parse(readFileSync('test/fixtures/sim-pokemon-snapshot.json', 'utf8')));
const ctx = { balanceCents: toCents(snap.account!.balance) };

describe('shipped strategies on the default simulator world', () => {
  it('balanced opens the promotional pack (EV ratio > 1) and nothing at a house edge', () => {
    const rows = scorePools(snap.pools, loadStrategy('strategies/balanced.yaml'), ctx);
    const open = rows.filter((r) => r.decision.action === 'open');
    expect(open.length).toBeGreaterThan(0);
    expect(rows[0]!.pack_type).toBe('promo_pikachu');
    for (const r of open) {
      expect(r.pack_type).toBe('promo_pikachu');
      expect(r.ev_ratio!).toBeGreaterThan(1);
    }
  });

  it('conservative never opens a pack below its 1.05 realized ratio', () => {
    const rows = scorePools(snap.pools, loadStrategy('strategies/conservative.yaml'), ctx);
    for (const r of rows.filter((x) => x.decision.action === 'open'))
      expect(r.realized_ev_ratio!).toBeGreaterThanOrEqual(1.05);
  });

  it('chase only opens aggressive packs, at fixed size', () => {
    const rows = scorePools(snap.pools, loadStrategy('strategies/chase.yaml'), ctx);
    const open = rows.filter((r) => r.decision.action === 'open');
    expect(open.length).toBeGreaterThan(0);
    for (const r of open) {
      expect(r.risk_level).toBe('aggressive');
      expect(r.decision).toMatchObject({ quantity: 5 });
    }
  });
});

describe('strategy schema', () => {
  it('fills every default from the format line alone', () => {
    const s = defaultStrategy();
    expect(s.sell.list.fill).toEqual({ model: 'hazard', fills_per_day_at_value: 1, price_sensitivity: 4 });
    expect(s.budget).toMatchObject({ max_daily_spend_usd: 500, min_balance_usd: 100, kill_switch: false });
    expect(s.packs.risk_levels).toEqual(['chill', 'standard', 'aggressive']);
  });

  it('keeps defaults of a partly given section', () => {
    const s = StrategyFile.parse({ format: STRATEGY_FORMAT, sell: { list: { markup: 1.2 } } });
    expect(s.sell.list.max_days).toBe(3);
    expect(s.sell.threshold_usd).toBe(50);
  });

  it.each([
    [{ open: { min_ev_ratoi: 1 } }, 'open'],
    [{ open: { max_quantity: 11 } }, 'open.max_quantity'],
    [{ sell: { list: { markup: 2.5 } } }, 'sell.list.markup'],
    [
      {
        sell: {
          list: {
            fill: {
              model: 'piecewise',
              points: [
                [2, 0.1],
                [1, 0.5],
              ],
            },
          },
        },
      },
      'sell.list.fill.points',
    ],
    [{ packs: { categories: ['cars'] } }, 'packs.categories.0'],
  ])('rejects %j at %s', (over, path) => {
    const r = StrategyFile.safeParse({ format: STRATEGY_FORMAT, ...over });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path.join('.'))).toContain(path);
  });

  it('loadStrategy names file, line and field', () => {
    expect(() => loadStrategy('test/fixtures/strategy-broken.yaml')).toThrow(InputFileError);
    expect(() => loadStrategy('test/fixtures/strategy-broken.yaml')).toThrow(
      /strategy-broken\.yaml:5:17: open\.max_quantity/,
    );
  });
});
