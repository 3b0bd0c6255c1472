/**
 * `packbot report`'s expected vs realized: the `model` block of `--json` and its table, from a
 * ledger whose orders carry the model's promise.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Ledger } from '../../src/store/ledger.js';
import type { OrderPromise } from '../../src/strategy/model-promise.js';
import { strategyDigest } from '../../src/strategy/strategy-digest.js';
import { cardPull, packResponse, sealedPull, T0 } from '../store/fixtures.js';
import { strategy } from '../strategy-builder.js';

const STRATEGY = strategy({ name: 'balanced' });
const PROMISE: OrderPromise = {
  packs: 2,
  priceCents: 1000,
  evCents: 1300,
  realizedEvCents: 1200,
  sdCents: 500,
  pLoss: 0.5,
  parts: {
    sell_back: { meanCents: 900, sdCents: 400 },
    listing: { meanCents: 0, sdCents: 0 },
    held: { meanCents: 300, sdCents: 200 },
  },
};

let dir: string;
let out: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'packbot-report-model-'));
  writeFileSync(join(dir, 'x.yaml'), 'x: 1\n');
  writeFileSync(
    join(dir, 'bot.yaml'),
    `format: packbot.config/v1\napi:\n  base_url: https://api.example.com\naccounts:\n  - name: main\n    strategy: x.yaml\nstore:\n  path: ${join(dir, 'bot.db')}\n`,
  );
  out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

/** One order of two packs: a card sold back at 8.10, a sealed pack (worth 0.5 × 6 = 3.00). */
function seed() {
  const ledger = Ledger.open(join(dir, 'bot.db'), { clock: new VirtualClock(T0) });
  ledger.recordIntent({
    key: 'key-model-1',
    account: 'main',
    operation: 'pack',
    body: { pack_type: 'starter', category: 'pokemon', quantity: 2, risk_level: 'chill' },
    model: {
      strategy: STRATEGY,
      category: 'pokemon',
      packType: 'starter',
      riskLevel: 'chill',
      promise: PROMISE,
    },
  });
  ledger.markIntentSent('key-model-1');
  ledger.confirmIntent(
    'key-model-1',
    packResponse('CO1', [cardPull('a', 9, '2026-01-01T12:05:00.000Z'), sealedPull('s', 6)], 20, 80),
  );
  ledger.recordDecision({ pullId: 'pull-a', action: 'sell_back', reason: 'low' });
  ledger.recordSellBack([{ card_id: 'card-a', pull_id: 'pull-a', status: 'sold', payout_amount: 8.1 }]);
  ledger.close();
}

const cfg = () => ['--config', join(dir, 'bot.yaml')];

describe('packbot report: expected vs realized', () => {
  it('--json has the model block: figures, parts, by pack and by strategy version', async () => {
    seed();
    expect(await main(['report', ...cfg(), '--json'])).toBe(0);
    const m = JSON.parse(out).model;
    // Expected 2 × (12 − 10) = 4; realized 8.10 + 3.00 − 20 = −8.90; se √2 × 5.
    expect(m).toMatchObject({
      marking: 'model',
      orders: 1,
      packs: 2,
      resolved_packs: 2,
      open_pulls: 0,
      expected_net_usd: 4,
      realized_net_usd: -8.9,
      gap_usd: -12.9,
      se_usd: 7.07,
      z: -1.824,
      excluded_orders: 0,
    });
    expect(m.parts.sell_back).toMatchObject({
      packs: 2,
      pulls: 1,
      expected_net_usd: 18,
      realized_net_usd: 8.1,
    });
    expect(m.parts.held).toMatchObject({ pulls: 1, expected_net_usd: 6, realized_net_usd: 3 });
    expect(m.parts.listing).toMatchObject({ packs: 0, pulls: 0, z: null });
    expect(m.by_pack).toEqual([
      expect.objectContaining({ category: 'pokemon', pack_type: 'starter', risk_level: 'chill', packs: 2 }),
    ]);
    expect(m.by_strategy).toEqual([
      expect.objectContaining({ strategy: 'balanced', version: strategyDigest(STRATEGY).slice(0, 12) }),
    ]);
    expect(m.series).toHaveLength(1);
  });

  it('the table shows the whole, its parts, the strategy version and the pack', async () => {
    seed();
    expect(await main(['report', ...cfg()])).toBe(0);
    expect(out).toContain('Expected vs realized');
    const model = out.slice(out.indexOf('Expected vs realized'));
    const row = (label: string) => model.split('\n').find((l) => l.startsWith(label)) ?? '';
    expect(row('all ')).toMatch(/^all\s+2\s+\+4\.00\s+-8\.90\s+-12\.90\s+7\.07\s+-1\.82\s+2$/);
    expect(row('  sell-back')).toMatch(/\+18\.00\s+\+8\.10\s+-9\.90/);
    expect(row(`balanced (${strategyDigest(STRATEGY).slice(0, 12)})`)).toContain('-1.82');
    expect(row('pokemon/starter chill')).toContain('-12.90');
  });
});
