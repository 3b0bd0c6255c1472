import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadWorld } from '../../src/config/world-file.js';
import { UserInputError } from '../../src/core/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'packbot-extends-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, `format: packbot.world/v1\n${text}`);
  return p;
};

describe('world files that extend another', () => {
  it('merge dynamics and rules field by field over the base, and replace other sections', () => {
    const base = file(
      'base.yaml',
      'name: base\ndynamics:\n  others_pack_openings_per_hour: 10\n  tick_seconds: 1800\n',
    );
    const child = file(
      'child.yaml',
      'extends: base.yaml\nname: child\ndynamics:\n  others_pack_openings_per_hour: 55\nrules:\n  seller_fee_rate: 0.1\n',
    );
    const w = loadWorld(child);
    expect(w.name).toBe('child');
    expect(w.dynamics.others_pack_openings_per_hour).toBe(55);
    expect(w.dynamics.tick_seconds).toBe(1800);
    expect(w.rules.seller_fee_rate).toBe(0.1);
    expect(loadWorld(base).dynamics.others_pack_openings_per_hour).toBe(10);
  });

  it('extends: default is the shipped world', () => {
    const w = loadWorld(file('d.yaml', 'extends: default\ndynamics:\n  value_daily_volatility: 0.05\n'));
    expect(w.dynamics.value_daily_volatility).toBe(0.05);
    expect(w.keys.map((k) => k.key)).toContain('sk_sim_full');
  });

  it.each([
    [
      'a missing base',
      'missing.yaml',
      'extends: nowhere.yaml\n',
      /missing\.yaml:2:\d+: extends: no such world file/,
    ],
    [
      'a cycle',
      'loop.yaml',
      'extends: loop.yaml\n',
      /loop\.yaml:2:\d+: extends: extends a world that extends this one/,
    ],
  ])('names the file and the extends line for %s', (_n, name, text, message) => {
    const p = file(name, text);
    expect(() => loadWorld(p)).toThrow(UserInputError);
    expect(() => loadWorld(p)).toThrow(message);
  });
});
