import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { worldSnapshot } from '../backtest/world-snapshot.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { runCli } from './run-cli.js';

afterEach(removeTempDirs);

describe('packbot backtest --shard and packbot merge', () => {
  it('two shards on worker threads merge into the unsharded JSON', async () => {
    const dir = tempDir('merge-');
    const snap = join(dir, 'snap.json');
    writeFileSync(snap, JSON.stringify(await worldSnapshot()));
    const common = [
      '--snapshot',
      snap,
      '--strategy',
      'strategies/balanced.yaml',
      '--days',
      '2',
      '--paths',
      '9',
    ];
    const whole = await runCli(['backtest', ...common, '--workers', '0', '--json', join(dir, 'whole.json')]);
    expect(whole.code).toBe(0);
    for (const k of [1, 2]) {
      const r = await runCli([
        'backtest',
        ...common,
        '--workers',
        '1',
        '--shard',
        `${k}/2`,
        '--json',
        join(dir, `part-${k}.json`),
      ]);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain(`shard ${k}/2 of 9 paths`);
    }
    const v = await runCli(['validate', join(dir, 'part-1.json')]);
    expect(v.stdout).toContain('ok (backtest-part');
    const m = await runCli([
      'merge',
      join(dir, 'part-2.json'),
      join(dir, 'part-1.json'),
      '--json',
      join(dir, 'all.json'),
      '--html',
      join(dir, 'all.html'),
    ]);
    expect(m.stderr).toBe('');
    expect(m.code).toBe(0);
    const strip = (f: string) => ({ ...JSON.parse(readFileSync(join(dir, f), 'utf8')), elapsed_ms: 0 });
    expect(strip('all.json')).toEqual(strip('whole.json'));
    expect(readFileSync(join(dir, 'all.html'), 'utf8')).toContain('<svg');

    const missing = await runCli(['merge', join(dir, 'part-1.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing shard 2\/2/);
    const bad = await runCli(['backtest', ...common, '--shard', '3/2']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--shard must be K\/N/);
  });
});
