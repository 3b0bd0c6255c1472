/** The chaos CLI's flags (exit 2, a clear message, nothing run) and the seeded round plan. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AuditResult } from '../../chaos/audit.js';
import { main, parseSeeds, plannedRuns, totalLine } from '../../chaos/run.js';
import { planRound, SCENARIOS } from '../../chaos/scenarios.js';
import { ALL_WORLDS, ALT_WORLDS, worldLabel, worldRules } from '../../chaos/worlds.js';
import { Rng } from '../../src/core/prng.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';

afterEach(removeTempDirs);

describe('npm run chaos flags', () => {
  afterEach(() => vi.restoreAllMocks());

  async function usage(argv: string[]): Promise<string> {
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const code = await main(argv);
    const text = err.mock.calls.map((c) => String(c[0])).join('');
    err.mockRestore();
    expect(code).toBe(2);
    return text;
  }

  it('refuses a bad flag with exit 2 and says which', async () => {
    expect(await usage(['--kills', 'x'])).toMatch(/^chaos: --kills must be an integer, got 'x'/);
    expect(await usage(['--kills=-1'])).toMatch(/--kills must be at least 0/);
    expect(await usage(['--seed', '1.5'])).toMatch(/--seed must be an integer/);
    expect(await usage(['--scenario', 'drops,nope'])).toMatch(/unknown scenario 'nope'/);
    expect(await usage(['--frobnicate'])).toMatch(/^chaos: Unknown option '--frobnicate'/);
    expect(await usage(['extra'])).toMatch(/unexpected argument 'extra'/);
    expect(await usage(['--seeds', '5-1'])).toMatch(/--seeds: the range '5-1' runs backwards/);
    expect(await usage(['--seeds', '1,x'])).toMatch(/--seeds: 'x' is not a seed/);
    expect(await usage(['--seeds', '1-500'])).toMatch(/at most 100 seeds/);
    expect(await usage(['--seed', '1', '--seeds', '1-2'])).toMatch(
      /--seed and --seeds cannot be used together/,
    );
    expect(await usage(['--world', 'nope.yaml'])).toMatch(/--world nope.yaml: no such file/);
    expect(await usage(['--worlds', 'some'])).toMatch(/--worlds takes 'all', got 'some'/);
    expect(await usage(['--world', 'default', '--worlds', 'all'])).toMatch(
      /--world and --worlds cannot be used together/,
    );
  });

  it('refuses a world file that is not valid, naming its line', async () => {
    const dir = tempDir('packbot-chaos-world-');
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'format: packbot.world/v1\nextends: default\nrules:\n  vault_order: sideways\n');
    expect(await usage(['--world', bad])).toMatch(/bad\.yaml:4:\d+.*vault_order/);
  });

  it('runs a seed on one world, on every world, or on the worlds by turns', () => {
    const [def, fee10, sorted, slowpay] = ALL_WORLDS;
    expect(ALL_WORLDS.map(worldLabel)).toEqual(['default', 'alt-fee10', 'alt-sorted', 'alt-slowpay']);
    expect(plannedRuns([1, 2], ALT_WORLDS[0], false)).toEqual([
      { seed: 1, world: fee10 },
      { seed: 2, world: fee10 },
    ]);
    expect(plannedRuns([3], undefined, true)).toEqual(ALL_WORLDS.map((world) => ({ seed: 3, world })));
    expect(plannedRuns([1, 2, 3, 4, 5], undefined, false).map((r) => r.world)).toEqual([
      def,
      fee10,
      sorted,
      slowpay,
      def,
    ]);
    expect(worldRules(fee10!)).toMatchObject({ seller_fee_rate: 0.1, vault_sealed_packs: true });
  });

  it('reads seeds as ranges and lists, each once, in the order given', () => {
    expect(parseSeeds('1-5')).toEqual([1, 2, 3, 4, 5]);
    expect(parseSeeds('3,1')).toEqual([3, 1]);
    expect(parseSeeds('1-3,9,2')).toEqual([1, 2, 3, 9]);
  });

  it('adds the seeds up in one line and names the seeds that failed', () => {
    const r = (seed: number, over: Partial<AuditResult> = {}) => ({
      seed,
      kills: 100,
      orders: 400,
      cardOrders: 40,
      charges: 400,
      doubleCharges: 0,
      lostPulls: 0,
      soldAtFresh: 900,
      cardPulls: 1200,
      moneyDiffCents: 0,
      capsKept: true,
      problems: [],
      notes: [],
      ok: true,
      ...over,
    });
    expect(totalLine([r(1), r(2)])).toBe(
      'chaos total: 2 seeds, 200 kills, 800 orders (80 cards), 800 charges, 0 double charges, 0 lost pulls, 0 over a cap, ledger = simulator; every seed clean',
    );
    expect(totalLine([r(1), r(3, { doubleCharges: 2, charges: 402, capsKept: false, ok: false })])).toMatch(
      /802 charges, 2 double charges, 0 lost pulls, 1 over a cap, ledger = simulator; failed: seed 3$/,
    );
    expect(
      totalLine([
        { ...r(1), world: 'default' },
        { ...r(1, { ok: false, moneyDiffCents: -7 }), world: 'alt-fee10' },
      ]),
    ).toMatch(/^chaos total: 2 runs, .* ledger - simulator = -7 cents; failed: seed 1 \(alt-fee10\)$/);
  });

  it('refuses to keep files in a directory that already holds some', async () => {
    const dir = tempDir('packbot-chaos-keep-');
    writeFileSync(join(dir, 'ledger.db'), '');
    expect(await usage(['--keep', dir])).toMatch(/the directory is not empty/);
  });
});

describe('round plan', () => {
  it('is the same for the same seed and uses only the selected families', () => {
    const plans = (seed: number) => {
      const rng = new Rng(seed);
      return Array.from({ length: 20 }, () => planRound(rng, ['drops', 'price-zero']));
    };
    expect(plans(5)).toEqual(plans(5));
    expect(plans(5)).not.toEqual(plans(6));
    for (const p of plans(5)) {
      expect(p.families.every((f) => f === 'drops' || f === 'price-zero')).toBe(true);
      expect(p.proxy.forgetKeys).toBe(false);
      expect(p.proxy.zeroPricePack !== null).toBe(p.families.includes('price-zero'));
    }
  });

  it('covers every family over a run of the default selection', () => {
    const rng = new Rng(1);
    const seen = new Set(Array.from({ length: 50 }, () => planRound(rng, SCENARIOS).families).flat());
    expect([...seen].sort()).toEqual([...SCENARIOS].sort());
  });
});
