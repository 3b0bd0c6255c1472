/** The chaos CLI's flags (exit 2, a clear message, nothing run) and the seeded round plan. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../chaos/run.js';
import { planRound, SCENARIOS } from '../../chaos/scenarios.js';
import { Rng } from '../../src/core/prng.js';

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
  });

  it('refuses to keep files in a directory that already holds some', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'packbot-chaos-keep-'));
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
