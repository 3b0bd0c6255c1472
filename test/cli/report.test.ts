import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { parseTime } from '../../src/cli/report.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Ledger } from '../../src/store/ledger.js';
import { bookOrder, cardPull, packResponse, T0 } from '../store/fixtures.js';

let dir: string;
let out: string;
let err: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'packbot-report-'));
  mkdirSync(join(dir, 's'));
  writeFileSync(join(dir, 's', 'x.yaml'), 'x: 1\n');
  writeFileSync(
    join(dir, 'bot.yaml'),
    `format: packbot.config/v1\napi:\n  base_url: https://api.example.com\naccounts:\n  - name: main\n    strategy: s/x.yaml\nstore:\n  path: ${join(dir, 'db', 'bot.db')}\n`,
  );
  out = '';
  err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

function seed() {
  const ledger = Ledger.open(join(dir, 'db', 'bot.db'), { clock: new VirtualClock(T0) });
  bookOrder(
    ledger,
    'key-order-1',
    packResponse('CO1', [cardPull('z', 10, '2026-01-01T12:05:00.000Z')], 10, 90),
    {
      expectedValueCents: 900,
      stdevCents: 100,
    },
  );
  ledger.recordDecision({ pullId: 'pull-z', action: 'sell_back', reason: 'r' });
  ledger.recordSellBack([{ card_id: 'card-z', pull_id: 'pull-z', status: 'sold', payout_amount: 9 }]);
  ledger.close();
}

const cfg = () => ['--config', join(dir, 'bot.yaml')];

describe('packbot report', () => {
  it('prints an aligned table (no API key needed)', async () => {
    seed();
    expect(await main(['report', ...cfg(), '--since', '2026-01-01', '--until', '2026-01-01'])).toBe(0);
    expect(out).toContain('standard');
    expect(out).toContain('pokemon/starter');
    expect(out).toContain('2026-01-01');
    expect(out).toMatch(/-\$1\.00/); // $9 back on $10 spent
    expect(out).toContain('+1.00σ');
    const lines = out.split('\n');
    const header = lines.find((l) => l.startsWith('pack '))!;
    const row = lines.find((l) => l.startsWith('pokemon/starter'))!;
    expect(row.length).toBe(header.length);
  });

  it('prints JSON for machines', async () => {
    seed();
    expect(await main(['report', ...cfg(), '--json'])).toBe(0);
    const r = JSON.parse(out);
    expect(r.totals).toMatchObject({ orders: 1, spendCents: 1000, sellbackPayoutCents: 900, netCents: -100 });
    expect(r.byPack[0].key).toBe('pokemon/starter');
  });

  it('by default reaches orders a sped-up clock wrote ahead of the wall clock', async () => {
    const ahead = Ledger.open(join(dir, 'db', 'bot.db'), { clock: new VirtualClock(Date.UTC(2099, 0, 1)) });
    bookOrder(
      ahead,
      'key-future-1',
      packResponse('CO-F', [cardPull('f', 10, '2099-01-01T00:05:00.000Z')], 7, 93),
    );
    ahead.close();
    expect(await main(['report', ...cfg(), '--json'])).toBe(0);
    const r = JSON.parse(out);
    expect(r.totals.orders).toBe(1);
    expect(r.until).toBe('2099-01-01T00:00:00.000Z');
  });

  it('filters by account, and refuses an account the config does not have', async () => {
    seed();
    expect(await main(['report', ...cfg(), '--account', 'main', '--json'])).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ account: 'main', totals: { orders: 1 } });
    expect(await main(['report', ...cfg(), '--account', 'nobody'])).toBe(2);
    expect(err).toMatch(/'nobody' is not an account/);
  });

  it('says so when the window has no orders', async () => {
    seed();
    expect(await main(['report', ...cfg(), '--since', '2026-06-01T00:00:00Z'])).toBe(0);
    expect(out).toMatch(/No orders/);
  });

  it('exits 2 with a message on bad flags, dates, windows, config or a missing ledger', async () => {
    seed();
    expect(await main(['report', ...cfg(), '--since', 'yesterday'])).toBe(2);
    expect(err).toMatch(/--since must be a date/);
    expect(await main(['report', ...cfg(), '--since', '2026-01-05', '--until', '2026-01-01'])).toBe(2);
    expect(err).toMatch(/--since must not be after --until/);
    expect(await main(['report', ...cfg(), '--bogus'])).toBe(2);
    expect(await main(['report', '--config', join(dir, 'missing.yaml')])).toBe(2);
    expect(err).toMatch(/missing\.yaml: file not found/);
    rmSync(join(dir, 'db'), { recursive: true });
    expect(await main(['report', ...cfg()])).toBe(2);
    expect(err).toMatch(/no ledger at/);
    expect(err).not.toMatch(/at .*\.ts:\d+/); // no stack trace
  });

  it('parses dates and times strictly', () => {
    expect(parseTime('2026-01-05', 'since')).toBe(Date.UTC(2026, 0, 5));
    expect(parseTime('2026-01-05', 'until')).toBe(Date.UTC(2026, 0, 6) - 1);
    expect(parseTime('2026-01-05T10:00:00+02:00', 'since')).toBe(Date.UTC(2026, 0, 5, 8));
    expect(() => parseTime('2026-02-30', 'since')).toThrow();
    expect(() => parseTime('2026-01-05T10:00:00', 'since')).toThrow(/offset/);
  });
});
