import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { Ledger } from '../../src/store/ledger.js';
import { T0 } from '../store/fixtures.js';
import { runCli } from './run-cli.js';

let dir: string;
let config: string;
const db = () => join(dir, 'db', 'bot.db');

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'packbot-orders-'));
  mkdirSync(join(dir, 's'));
  writeFileSync(join(dir, 's', 'x.yaml'), 'x: 1\n');
  config = join(dir, 'bot.yaml');
  writeFileSync(
    config,
    `format: packbot.config/v1\napi:\n  base_url: https://api.example.com\naccounts:\n  - name: main\n    strategy: s/x.yaml\nstore:\n  path: ${db()}\n`,
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Two orders in doubt (one parked) and one failed before it was sent anywhere. */
function seed() {
  const ledger = Ledger.open(db(), { clock: new VirtualClock(T0) });
  const body = { pack_type: 'starter', category: 'pokemon', quantity: 2, risk_level: 'standard' };
  for (const key of ['pb_main_parked01', 'pb_main_doubt001', 'pb_main_refused1']) {
    ledger.recordIntent({ key, account: 'main', operation: 'pack', body, unitPriceCents: 1000 });
    ledger.markIntentSent(key);
  }
  ledger.markInDoubt('pb_main_parked01', 'TRANSPORT_RESET', 'reset');
  ledger.parkIntent('pb_main_parked01', 'PARKED', 'the service did not recognise the key on a re-send');
  ledger.markInDoubt('pb_main_doubt001', 'TRANSPORT_TIMEOUT', 'timeout');
  ledger.failIntent('pb_main_refused1', 'RATE_LIMITED', 'too soon');
  ledger.close();
}

describe('packbot orders', () => {
  it('lists orders in doubt, parked first, as a table and as JSON', async () => {
    seed();
    const t = await runCli(['orders', '--config', config, '--in-doubt']);
    expect(t.code).toBe(0);
    const lines = t.stdout.split('\n');
    // The charge is not known yet: the bound (planned price × packs) is marked as one.
    expect(lines[2]).toMatch(/^pb_main_parked01\s+main\s+parked\s+2 × starter\s+<= \$20\.00/);
    expect(lines[3]).toMatch(/^pb_main_doubt001\s+main\s+in_doubt/);
    expect(t.stdout).not.toMatch(/pb_main_refused1/);
    expect(t.stdout).toMatch(/packbot orders settle KEY/);
    const j = await runCli(['orders', '--config', config, '--json']);
    const rows = JSON.parse(j.stdout).orders as { key: string; state: string }[];
    expect(rows.map((r) => r.state).sort()).toEqual(['failed', 'in_doubt', 'parked']);
    // The P&L report shows them beside its figures, never in them.
    const report = await runCli(['report', '--config', config]);
    expect(report.stdout).toMatch(/Orders in doubt \(not in the figures until settled\): 2, 1 parked/);
    const rj = JSON.parse((await runCli(['report', '--config', config, '--json'])).stdout);
    expect(rj.in_doubt).toMatchObject({ count: 2, parked: 1 });
    expect(rj.totals.orders).toBe(0);
  });

  it('settles by hand: not charged closes it, charged books it at its planned price', async () => {
    seed();
    expect(
      (await runCli(['orders', 'settle', 'pb_main_parked01', '--not-charged', '--config', config])).code,
    ).toBe(0);
    const c = await runCli([
      'orders',
      'settle',
      'pb_main_doubt001',
      '--charged',
      '--note',
      'seen in the app',
      '--config',
      config,
    ]);
    expect(c.code).toBe(0);
    expect(c.stdout).toMatch(/settled as charged \(\$20\.00, its bound\)/);
    const ledger = Ledger.open(db(), { readonly: true });
    try {
      expect(ledger.unresolvedCount()).toBe(0);
      expect(ledger.getIntent('pb_main_parked01')).toMatchObject({ state: 'failed', settledBy: 'operator' });
      expect(ledger.orderForIntent('pb_main_doubt001')).toMatchObject({
        quantity: 2,
        totalChargedCents: 2000,
      });
      expect(ledger.getIntent('pb_main_doubt001')?.settledBy).toBe('operator: seen in the app');
    } finally {
      ledger.close();
    }
    expect((await runCli(['orders', '--config', config, '--in-doubt'])).stdout).toBe('No order in doubt.\n');
  });

  it('refuses what it cannot do, with exit 2 and no change', async () => {
    seed();
    const cases = [
      ['orders', 'settle', 'pb_main_refused1', '--charged', '--config', config],
      ['orders', 'settle', 'pb_main_nosuchkey', '--charged', '--config', config],
      ['orders', 'settle', 'pb_main_doubt001', '--config', config],
      ['orders', 'settle', 'pb_main_doubt001', '--charged', '--not-charged', '--config', config],
      ['orders', 'cancel', 'pb_main_doubt001', '--config', config],
      ['orders', '--charged', '--config', config],
    ];
    for (const argv of cases) {
      const r = await runCli(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    const ledger = Ledger.open(db(), { readonly: true });
    expect(ledger.unresolvedCount()).toBe(2);
    ledger.close();
  });
});
