import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/main.js';

// The built CLI, exactly as `npx packbot` runs it (npm test builds before vitest).
const packbot = (...args: string[]) =>
  spawnSync(process.execPath, ['bin/packbot.js', ...args], { encoding: 'utf8', timeout: 120_000 });

describe('packbot CLI', () => {
  it('--help lists every command and exits 0', () => {
    const r = packbot('--help');
    expect(r.status).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(r.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
  });

  it('every command answers --help with its usage', () => {
    for (const name of Object.keys(COMMANDS)) {
      const r = packbot(name, '--help');
      expect(r.status, name).toBe(0);
      expect(r.stdout).toContain(`Usage: packbot ${name}`);
    }
  });

  it('an unknown command or flag is a usage error: exit 2, one line, no stack trace', () => {
    for (const args of [['frobnicate'], ['score', '--no-such-flag'], ['toString']]) {
      const r = packbot(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^packbot: /);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
