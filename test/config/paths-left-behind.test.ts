/**
 * A ledger or pause file written where a packbot resolving against the working directory put it,
 * and not where the config now points: `packbot run` refuses naming file, line, field and both
 * paths, rather than open empty books.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pathsLeftBehind } from '../../src/config/paths-left-behind.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';

afterEach(removeTempDirs);

/** A config in `<root>/etc` (with `extra` lines) and an empty working directory `<root>/home`. */
function layout(extra: string[]): { config: string; home: string; etc: string } {
  const root = tempDir('packbot-behind-');
  const [etc, home] = [join(root, 'etc'), join(root, 'home')];
  mkdirSync(etc);
  mkdirSync(join(home, 'data'), { recursive: true });
  const config = join(etc, 'bot.yaml');
  writeFileSync(
    config,
    [
      'format: packbot.config/v1',
      'api:',
      '  base_url: embedded',
      'accounts:',
      '  - name: main',
      '    strategy: s.yaml',
      ...extra,
      '',
    ].join('\n'),
  );
  return { config, home, etc };
}

describe('pathsLeftBehind', () => {
  it('names the ledger the working directory holds and the config no longer points at', () => {
    const { config, home, etc } = layout(['store:', '  path: data/packbot.db']);
    writeFileSync(join(home, 'data/packbot.db'), '');
    const e = pathsLeftBehind(config, 'live', home);
    expect(e?.issues).toEqual([
      expect.objectContaining({ file: config, line: 8, column: 9, path: 'store.path' }),
    ]);
    expect(e?.message).toContain(
      `no ledger at ${join(etc, 'data/packbot.db')}, but one at ${join(home, 'data/packbot.db')}`,
    );
  });

  it('dry-run looks for the old paper ledger', () => {
    const { config, home } = layout([]);
    writeFileSync(join(home, 'data/packbot.db'), '');
    expect(pathsLeftBehind(config, 'dry-run', home)).toBeUndefined();
    writeFileSync(join(home, 'data/packbot.dry-run.db'), '');
    expect(pathsLeftBehind(config, 'dry-run', home)?.message).toContain(
      join(home, 'data/packbot.dry-run.db'),
    );
  });

  it('names a pause file left behind (the operator meant the bot to stay paused)', () => {
    const { config, home } = layout(['control:', '  kill_switch_file: data/pause']);
    writeFileSync(join(home, 'data/pause'), '');
    expect(pathsLeftBehind(config, 'live', home)?.issues.map((i) => i.path)).toEqual([
      'control.kill_switch_file',
    ]);
  });

  it.each([
    ['the config already has its ledger', ['store:', '  path: data/packbot.db'], true],
    ['the path is absolute', ['store:', '  path: /nonexistent/packbot.db'], false],
    ['the ledger is in memory', ['store:', "  path: ':memory:'"], false],
  ])('says nothing when %s', (_what, extra, withNew) => {
    const { config, home, etc } = layout(extra);
    writeFileSync(join(home, 'data/packbot.db'), '');
    if (withNew) {
      mkdirSync(join(etc, 'data'));
      writeFileSync(join(etc, 'data/packbot.db'), '');
    }
    expect(pathsLeftBehind(config, 'live', home)).toBeUndefined();
  });

  it('says nothing when run from the config directory (the old and new paths are one)', () => {
    const { config, etc } = layout([]);
    mkdirSync(join(etc, 'data'));
    writeFileSync(join(etc, 'data/packbot.db'), '');
    expect(pathsLeftBehind(config, 'live', etc)).toBeUndefined();
  });
});
