import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { snapshot } from '../backtest/helpers.js';
import { chaseOnTop } from '../fixtures/pools.js';

let dir: string;
let err: string;
let out: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bt-'));
  err = '';
  out = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const goodSnap = () => write('snap.json', JSON.stringify(snapshot([chaseOnTop])));
const goodStrategy = () =>
  write('s.yaml', 'format: packbot.strategy/v1\nname: t\nopen:\n  min_ev_ratio: 0\n  sizing: fixed\n');

describe('packbot backtest', () => {
  it("--dynamics takes the engine's rescore_minutes and card_sync_minutes beside the world's fields", async () => {
    const json = join(dir, 'd.json');
    const dyn = write(
      'dyn.yaml',
      'value_daily_volatility: 0.01\nrescore_minutes: 60\ncard_sync_minutes: 30\n',
    );
    const code = await main([
      'backtest',
      ...['--snapshot', goodSnap(), '--strategy', goodStrategy(), '--dynamics', dyn],
      ...['--days', '1', '--paths', '4', '--workers', '0', '--json', json],
    ]);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(readFileSync(json, 'utf8')).partial).toBe(false);
  });

  it('runs end to end and writes JSON and HTML', async () => {
    const json = join(dir, 'r.json');
    const html = join(dir, 'r.html');
    const code = await main([
      'backtest',
      '--snapshot',
      goodSnap(),
      '--strategy',
      goodStrategy(),
      '--days',
      '2',
      '--paths',
      '20',
      '--workers',
      '0',
      '--market',
      'static',
      '--json',
      json,
      '--html',
      html,
    ]);
    expect(err).toBe('');
    expect(code).toBe(0);
    const r = JSON.parse(readFileSync(json, 'utf8'));
    expect(r.format).toBe('packbot.backtest/v1');
    for (const k of [
      'packs_opened',
      'spend_usd',
      'payout_usd',
      'listing_proceeds_usd',
      'holdings_value_usd',
      'net_pnl_usd',
      'roi',
      'max_drawdown_usd',
    ])
      expect(Object.keys(r.summary[k])).toEqual(['mean', 'stdev', 'p5', 'p50', 'p95']);
    expect(r.partial).toBe(false);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('<svg');
    expect(page).not.toMatch(/<script|<link|src="http/);
    expect(out).toContain('net P&L');
  });

  const bad: [string, () => string[], RegExp][] = [
    [
      'missing snapshot file',
      () => ['--snapshot', join(dir, 'nope.json'), '--strategy', goodStrategy()],
      /nope\.json: file not found/,
    ],
    [
      'invalid snapshot field',
      () => [
        '--snapshot',
        write('b.json', JSON.stringify({ ...snapshot([chaseOnTop]), taken_at: 'yesterday' })),
        '--strategy',
        goodStrategy(),
      ],
      /b\.json:\d+:\d+: taken_at/,
    ],
    [
      'invalid strategy field',
      () => [
        '--snapshot',
        goodSnap(),
        '--strategy',
        write('x.yaml', 'format: packbot.strategy/v1\nopen:\n  max_quantity: 50\n'),
      ],
      /x\.yaml:3:\d+: open\.max_quantity/,
    ],
    [
      'strategy naming no pack of the snapshot',
      () => [
        '--snapshot',
        goodSnap(),
        '--strategy',
        write('y.yaml', 'format: packbot.strategy/v1\npacks:\n  include: [nope]\n'),
      ],
      /y\.yaml: packs\.include: pack 'nope'/,
    ],
    [
      'bad flag value',
      () => ['--snapshot', goodSnap(), '--strategy', goodStrategy(), '--paths', 'many'],
      /--paths must be an integer/,
    ],
    [
      'bad market',
      () => ['--snapshot', goodSnap(), '--strategy', goodStrategy(), '--market', 'wild'],
      /--market must be static or dynamic/,
    ],
    [
      'an unknown --dynamics field, named with its file and line',
      () => [
        '--snapshot',
        goodSnap(),
        '--strategy',
        goodStrategy(),
        '--dynamics',
        write('dyn.yaml', 'card_sync_minutes: 30\nrescore_minute: 60\n'),
      ],
      /dyn\.yaml:\d+:\d+.*rescore_minute/s,
    ],
  ];
  for (const [name, args, msg] of bad)
    it(`exits 2 on ${name}`, async () => {
      const code = await main(['backtest', ...args()]);
      expect(code).toBe(2);
      expect(err).toMatch(msg);
      expect(err).not.toMatch(/\n\s+at /);
    });
});
