import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ScoreRow } from '../../src/strategy/score.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { runCli } from './run-cli.js';

afterAll(removeTempDirs);

const SNAP = 'test/fixtures/snapshot-hand.json';
const HAND = 'test/fixtures/strategy-hand.yaml';

describe('packbot score --snapshot --json', () => {
  it('gives every row to the cent of a hand computation', async () => {
    const { code, stdout, stderr } = await runCli([
      'score',
      '--snapshot',
      SNAP,
      '--strategy',
      HAND,
      '--json',
    ]);
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as ScoreRow[];
    const by = (p: string, r: string) => rows.find((x) => x.pack_type === p && x.risk_level === r)!;
    // starter: 0.01·500 + 0.99·(0.8·3 + 0.2·30) = 13.316; realized 5.4 + 0.99·7.56 = 12.8844 (score.test.ts).
    for (const risk of ['standard', 'aggressive']) {
      const r = by('starter', risk);
      expect([r.price, r.ev, r.server_expected_value, r.ev_gap, r.realized_ev]).toEqual([
        10, 13.32, 13.32, 0, 12.88,
      ]);
      expect(r.p_loss).toBeCloseTo(0.792, 9);
      expect(r.decision.action).toBe('open');
    }
    // sealed: 0.5·8 + 0.5·2 = 5.00; realized 0.5·7.20 + 0.5·(0.5·2) = 4.10.
    expect([by('sealed', 'chill').ev, by('sealed', 'chill').realized_ev]).toEqual([5, 4.1]);
    // partial (onepiece): (20 + 10 + 2·15)/4 = 15.00, estimated, bounds 10..20.
    const partial = by('partial', 'standard');
    expect([partial.ev, partial.ev_low, partial.ev_high, partial.estimated]).toEqual([15, 10, 20, true]);
    // the sold-out pool is reported, not crashed on, and not scored.
    expect(rows).toHaveLength(4);
    expect(stderr).toMatch(/skipped pokemon\/soldout.*no band has odds > 0/);
    // growth needs the snapshot's balance (10000 USD): present.
    expect(by('starter', 'standard').growth).toBeGreaterThan(0);
  });

  it('filters by --category', async () => {
    const { stdout } = await runCli([
      'score',
      '--snapshot',
      SNAP,
      '--strategy',
      HAND,
      '--category',
      'onepiece',
      '--json',
    ]);
    expect((JSON.parse(stdout) as ScoreRow[]).map((r) => r.pack_type)).toEqual(['partial']);
  });

  it('prints an aligned table, best first and marked, with the default strategy', async () => {
    const { code, stdout } = await runCli(['score', '--snapshot', SNAP]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^strategy: balanced/);
    const lines = stdout.split('\n').filter((l) => /^[* ] (pokemon|onepiece|category)/.test(l));
    expect(lines[0]).toMatch(/category\s+pack\s+risk\s+price/);
    expect(lines[1]).toMatch(/^\* pokemon\s+starter/);
    expect(lines.slice(2).every((l) => l.startsWith('  '))).toBe(true);
    // columns line up: every row has the price column ending at the same offset
    const header = lines[0]!;
    const priceEnd = header.indexOf('price') + 'price'.length;
    for (const l of lines.slice(1)) expect(l.slice(0, priceEnd)).toMatch(/\d\.\d\d$/);
  });

  it('--config with the embedded simulator reads pools over HTTP and scores them', async () => {
    // config/bot.yaml in a copy of the repo's layout: its ledger (and the simulator's saved state
    // beside it) is relative to the config file, and a developer's `npm start` leaves one in
    // the repo's data/, which would score the market as that run left it rather than a fresh one.
    const root = tempDir('score-copy-');
    mkdirSync(join(root, 'config'));
    for (const f of ['bot.yaml', 'sim.yaml']) cpSync(join('config', f), join(root, 'config', f));
    symlinkSync(resolve('strategies'), join(root, 'strategies'));
    const { code, stdout } = await runCli([
      'score',
      '--config',
      join(root, 'config/bot.yaml'),
      '--category',
      'pokemon',
      '--json',
    ]);
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as ScoreRow[];
    expect(rows.length).toBeGreaterThan(3);
    expect(rows.every((r) => r.category === 'pokemon' && r.growth !== null)).toBe(true);
    expect(rows[0]).toMatchObject({ pack_type: 'promo_pikachu', decision: { action: 'open' } });
  });

  it.each([
    [['score'], /give --snapshot F or --config F/],
    [['score', '--snapshot', SNAP, '--config', 'x.yaml'], /not both/],
    [['score', '--snapshot', SNAP, '--category', 'cars'], /--category must be one of/],
    [['score', '--snapshot', 'nope.json'], /nope\.json: file not found/],
    [['score', '--snapshot', SNAP, '--bogus'], /Unknown option '--bogus'/],
    [
      ['score', '--snapshot', SNAP, '--strategy', 'test/fixtures/strategy-broken.yaml'],
      /strategy-broken\.yaml:\d+:\d+: sell\.threshold_usd/,
    ],
  ])('bad input %j: exit 2, clear message, no stack', async (argv, message) => {
    const { code, stderr } = await runCli(argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});

describe('packbot score on a pool that prices its pack at 0', () => {
  it('shows the row waiting on price integrity, in the table and in --json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'score-'));
    try {
      const snap = JSON.parse(readFileSync(SNAP, 'utf8')) as {
        pools: { pack_type: string; risk_level: string; price: number }[];
      };
      for (const p of snap.pools) if (p.pack_type === 'starter' && p.risk_level === 'standard') p.price = 0;
      const file = join(dir, 'free.json');
      writeFileSync(file, JSON.stringify(snap));
      const json = await runCli(['score', '--snapshot', file, '--strategy', HAND, '--json']);
      expect(json.code).toBe(0);
      const rows = JSON.parse(json.stdout) as ScoreRow[];
      const free = rows.find((r) => r.pack_type === 'starter' && r.risk_level === 'standard')!;
      expect(free.decision).toEqual({
        action: 'wait',
        reason: 'price integrity: pool price 0.00 USD is not positive',
        integrity: 'price_not_positive',
      });
      // The honest risk level of the same pack is untouched.
      expect(
        rows.find((r) => r.pack_type === 'starter' && r.risk_level === 'aggressive')!.decision.action,
      ).toBe('open');
      const table = await runCli(['score', '--snapshot', file, '--strategy', HAND]);
      expect(table.stdout).toMatch(/starter.*wait: price integrity: pool price 0\.00 USD is not positive/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('packbot score --cards', () => {
  const dir = tempDir('packbot-cards-');
  const strategyFile = join(dir, 'cards.yaml');
  writeFileSync(
    strategyFile,
    'format: packbot.strategy/v1\ncards:\n  enabled: true\n  categories: [pokemon]\n  min_edge_ratio: 1.2\n',
  );
  const shopCard = (id: string, price: number, value: number) => ({
    id,
    name: `Card ${id}`,
    market_value: value,
    price,
    sale_status: 'shop',
  });
  const snap = JSON.parse(readFileSync(SNAP, 'utf8'));
  const withShop = join(dir, 'shop.json');
  writeFileSync(
    withShop,
    JSON.stringify({
      ...snap,
      format: 'packbot.snapshot/v2',
      shop: [
        { category: 'pokemon', total: 2, cards: [shopCard('cheap', 30, 100), shopCard('dear', 120, 100)] },
        { category: 'sports', total: 1, cards: [shopCard('other', 10, 100)] },
      ],
    }),
  );

  it('scores the snapshot shop: buys the underpriced card only, in the strategy categories', async () => {
    const { code, stdout } = await runCli([
      'score',
      '--cards',
      '--snapshot',
      withShop,
      '--strategy',
      strategyFile,
      '--json',
    ]);
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as { card_id: string; decision: { action: string; reason?: string } }[];
    expect(rows.map((r) => [r.card_id, r.decision.action])).toEqual([
      ['cheap', 'buy'],
      ['other', 'skip'],
      ['dear', 'skip'],
    ]);
    const table = await runCli(['score', '--cards', '--snapshot', withShop, '--strategy', strategyFile]);
    expect(table.stdout).toMatch(/\* pokemon\s+cheap/);
  });

  it('says so when the snapshot has no shop stock (exit 2)', async () => {
    const { code, stderr } = await runCli([
      'score',
      '--cards',
      '--snapshot',
      SNAP,
      '--strategy',
      strategyFile,
    ]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/snapshot-hand\.json: shop: this snapshot holds no shop stock/);
  });
});
