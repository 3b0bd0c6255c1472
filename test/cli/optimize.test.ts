import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { worldSnapshot } from '../backtest/world-snapshot.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { runCli } from './run-cli.js';

afterEach(removeTempDirs);

describe('packbot optimize', () => {
  it('writes best.yaml that validates, trials.json and a self-contained HTML report', async () => {
    const dir = tempDir('opt-');
    const snap = join(dir, 'snap.json');
    writeFileSync(snap, JSON.stringify(await worldSnapshot()));
    const out = join(dir, 'out');
    const r = await runCli([
      'optimize',
      '--snapshot',
      snap,
      '--strategy',
      'strategies/balanced.yaml',
      '--space',
      'examples/space-example.yaml',
      '--trials',
      '5',
      '--paths',
      '6',
      '--days',
      '2',
      '--workers',
      '1',
      '--out',
      out,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^optimize strategies\/balanced\.yaml/);
    expect(r.stdout).toContain('out of sample (6 fresh paths)');
    const v = await runCli(['validate', join(out, 'best.yaml')]);
    expect(v.code).toBe(0);
    const trials = JSON.parse(readFileSync(join(out, 'trials.json'), 'utf8'));
    expect(trials.format).toBe('packbot.optimize/v1');
    expect(trials.candidates).toHaveLength(5);
    for (const t of trials.candidates)
      if (t.status === 'evaluated') expect(Object.keys(t.figures)).toContain('objective_stderr');
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).not.toMatch(/<script|<link|src="http/);
    // One scatter per parameter of the space, plus the Pareto chart.
    expect(html.match(/<svg/g)).toHaveLength(trials.params.length + 1);
    expect(html).toContain('Pareto front');
  });

  it('rejects a bad space file naming file, line and field, exit 2', async () => {
    const dir = tempDir('opt-');
    const space = join(dir, 'space.yaml');
    writeFileSync(
      space,
      [
        'format: packbot.space/v1',
        'params:',
        '  open.min_ev_ratoi: { range: [1, 2] }',
        '  sell.list.markup: { range: [1.1, 2.5] }',
        '  open.sizing: { choice: [kelly, half] }',
        '  open.max_quantity: { range: [1, 10], step: 0.5 }',
        '',
      ].join('\n'),
    );
    const r = await runCli([
      'optimize',
      '--snapshot',
      'test/fixtures/snapshot-hand.json',
      '--strategy',
      'strategies/balanced.yaml',
      '--space',
      space,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/); // no stack trace
    expect(r.stderr).toContain(
      `${space}:3:22: params.open.min_ev_ratoi: no strategy field 'open.min_ev_ratoi'`,
    );
    expect(r.stderr).toContain(
      `${space}:4:36: params.sell.list.markup.range[1]: 2.5 is not a valid sell.list.markup`,
    );
    expect(r.stderr).toContain(
      `${space}:5:34: params.open.sizing.choice[1]: "half" is not a valid open.sizing`,
    );
    expect(r.stderr).toContain(
      `${space}:6:46: params.open.max_quantity.step: open.max_quantity is an integer`,
    );
    const v = await runCli(['validate', space]);
    expect(v.code).toBe(2);
    const missing = await runCli(['optimize', '--snapshot', 'x', '--strategy', 'y']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--space F is required');
  });
  it("--dynamics takes a world file (calibrate's output) or the backtest engine's fields, as backtest does", async () => {
    const dir = tempDir('opt-');
    const snap = join(dir, 'snap.json');
    writeFileSync(snap, JSON.stringify(await worldSnapshot()));
    const bare = join(dir, 'dyn.yaml');
    writeFileSync(bare, 'value_daily_volatility: 0.01\nrescore_minutes: 60\ncard_sync_minutes: 30\n');
    const args = (dynamics: string) => [
      ...['optimize', '--snapshot', snap, '--strategy', 'strategies/balanced.yaml'],
      ...['--space', 'examples/space-example.yaml', '--trials', '2', '--paths', '4', '--days', '1'],
      ...['--workers', '0', '--dynamics', dynamics],
    ];
    for (const dynamics of ['config/sim.yaml', bare]) {
      const r = await runCli(args(dynamics));
      expect(r.stderr, dynamics).toBe('');
      expect(r.code, dynamics).toBe(0);
    }
    writeFileSync(bare, 'card_sync_minutes: 30\nrescore_minute: 60\n');
    const bad = await runCli(args(bare));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/dyn\.yaml:\d+:\d+.*rescore_minute/s);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});
