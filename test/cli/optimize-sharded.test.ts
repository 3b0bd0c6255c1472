import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { worldSnapshot } from '../backtest/world-snapshot.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { runCli } from './run-cli.js';

afterEach(removeTempDirs);

const search = (snap: string, more: string[] = []) => [
  ...['--snapshot', snap, '--strategy', 'strategies/balanced.yaml', '--space', 'examples/space-example.yaml'],
  ...['--trials', '6', '--paths', '30', '--days', '2', '--seed', '5', ...more],
];

/** The outputs with the time taken blanked (the one thing a sharded search cannot reproduce). */
function outputs(dir: string): Record<string, string> {
  const blank = (s: string) =>
    s.replace(/"elapsed_ms": \d+/, '"elapsed_ms": 0').replace(/paths in \d+(\.\d+)? s/, 'paths in 0 s');
  return Object.fromEntries(
    ['best.yaml', 'trials.json', 'report.html'].map((f) => [f, blank(readFileSync(join(dir, f), 'utf8'))]),
  );
}

/** Plans, then runs every rung as `shards` shards (in turn, in this process) and merges it. */
async function sharded(snap: string, dir: string, shards: number, more: string[] = []): Promise<string> {
  const plan = await runCli(['optimize', ...search(snap, more), '--plan', dir]);
  expect(plan.stderr).toBe('');
  expect(plan.code).toBe(0);
  expect(plan.stdout).toMatch(/^planned 6 candidates .*next: rung 1: \d+ candidates x paths 0\.\.\d+\n$/);
  const out = join(dir, 'out');
  let last = '';
  for (let r = 1; existsSync(join(dir, `rung-${r}.json`)); r++) {
    // Shards in reverse order: the order they finish in does not matter.
    for (let k = shards; k >= 1; k--) {
      const s = await runCli([
        'optimize',
        '--dir',
        dir,
        '--rung',
        String(r),
        '--shard',
        `${k}/${shards}`,
        '--workers',
        '0',
      ]);
      expect(s.stderr).toBe('');
      expect(s.code).toBe(0);
    }
    const m = await runCli(['optimize', '--dir', dir, '--merge-rung', String(r), '--out', out]);
    expect(m.stderr).toBe('');
    expect(m.code).toBe(0);
    last = m.stdout;
  }
  expect(last).toMatch(/^optimize strategies\/balanced\.yaml/);
  return out;
}

describe('packbot optimize, sharded', () => {
  it("gives the unsharded search's outputs, the time taken apart, for any shard count", async () => {
    const dir = tempDir('opt-shard-');
    const snap = join(dir, 'snap.json');
    writeFileSync(snap, JSON.stringify(await worldSnapshot()));
    const whole = join(dir, 'whole');
    const r = await runCli(['optimize', ...search(snap), '--workers', '1', '--out', whole]);
    expect(r.code).toBe(0);
    const want = outputs(whole);
    expect(outputs(await sharded(snap, join(dir, 's3'), 3))).toEqual(want);
    // A rung per look, then the out-of-sample check.
    const rungs = readdirSync(join(dir, 's3')).filter((f) => /^rung-\d+\.json$/.test(f));
    expect(rungs.length).toBe(JSON.parse(want['trials.json']!).rungs.length + 1);
    // Halving too.
    const halving = join(dir, 'halving');
    expect(
      (await runCli(['optimize', ...search(snap, ['--race', 'off']), '--workers', '0', '--out', halving]))
        .code,
    ).toBe(0);
    expect(outputs(await sharded(snap, join(dir, 'h2'), 2, ['--race', 'off']))).toEqual(outputs(halving));
  });

  it('refuses a missing shard, a part of another rung and misplaced flags: exit 2, named', async () => {
    const dir = tempDir('opt-shard-');
    const snap = join(dir, 'snap.json');
    writeFileSync(snap, JSON.stringify(await worldSnapshot()));
    const plan = join(dir, 'plan');
    expect((await runCli(['optimize', ...search(snap), '--plan', plan])).code).toBe(0);
    expect(
      (await runCli(['optimize', '--dir', plan, '--rung', '1', '--shard', '1/2', '--workers', '0'])).code,
    ).toBe(0);
    const missing = await runCli(['optimize', '--dir', plan, '--merge-rung', '1']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('rung 1 is missing shard 2/2');
    expect(existsSync(join(plan, 'rung-2.json'))).toBe(false);
    const part = JSON.parse(readFileSync(join(plan, 'rung-1', 'part-1.json'), 'utf8'));
    writeFileSync(
      join(plan, 'rung-1', 'part-2.json'),
      JSON.stringify({ ...part, shard: { index: 2, count: 2 } }),
    );
    const wrong = await runCli(['optimize', '--dir', plan, '--merge-rung', '1']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/part-2\.json.*pairs.*shard 2\/2's slice is/);
    writeFileSync(
      join(plan, 'in', 'space.yaml'),
      `${readFileSync(join(plan, 'in', 'space.yaml'), 'utf8')}\n# edited\n`,
    );
    const edited = await runCli(['optimize', '--dir', plan, '--rung', '1', '--shard', '2/2']);
    expect(edited.code).toBe(2);
    expect(edited.stderr).toContain('changed since the plan');
    for (const [args, message] of [
      [['--dir', plan, '--rung', '1', '--shard', '1/2', '--paths', '9'], '--paths belongs to --plan'],
      [['--dir', plan, '--rung', '1'], '--rung R needs --shard K/N'],
      [['--rung', '1', '--shard', '1/2'], 'need --dir DIR'],
      [['--dir', plan, '--rung', '1', '--shard', '3/2'], '--shard must be K/N'],
      [['--dir', plan, '--merge-rung', '9'], 'rung-9.json is missing'],
      [[...search(snap), '--race', 'maybe'], '--race must be on or off'],
      [[...search(snap), '--race-alpha', '2'], '--race-alpha must be a number between 0 and 0.5'],
      [[...search(snap), '--plan', join(dir, 'p2'), '--out', dir], '--out goes to the last --merge-rung'],
    ] as const) {
      const r = await runCli(['optimize', ...args]);
      expect(r.code, message).toBe(2);
      expect(r.stderr, message).toContain(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
