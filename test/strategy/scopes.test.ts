import { describe, expect, it } from 'vitest';
import { missingScopes, scopesNeeded, strategyMayList } from '../../src/strategy/scopes.js';
import { strategy } from '../strategy-builder.js';
import { linearFill } from './helpers.js';

const READS = ['read:catalog', 'read:account'];
const neverFills = { model: 'piecewise' as const, points: [[1, 0] as [number, number]] };

describe('scopesNeeded', () => {
  it.each([
    [
      'default strategy, live',
      {},
      'live',
      [...READS, 'rip:packs', 'sell:cards', 'write:listings'],
      ['read:pulls'],
    ],
    ['default strategy, dry-run', {}, 'dry-run', READS, []],
    ['never opens (kill_switch), live', { budget: { kill_switch: true } }, 'live', READS, ['read:pulls']],
    [
      'lists only when better, and a listing never fills',
      { sell: { list: { fill: neverFills, only_when_better: true } } },
      'live',
      [...READS, 'rip:packs', 'sell:cards'],
      ['read:pulls'],
    ],
    [
      'lists even when not better',
      { sell: { list: { fill: neverFills, only_when_better: false } } },
      'live',
      [...READS, 'rip:packs', 'sell:cards', 'write:listings'],
      ['read:pulls'],
    ],
    [
      'a listing strategy with a high threshold',
      { sell: { threshold_usd: 1e9, list: { fill: linearFill } } },
      'live',
      [...READS, 'rip:packs', 'sell:cards', 'write:listings'],
      ['read:pulls'],
    ],
  ] as const)('%s', (_name, over, mode, required, optional) => {
    expect(scopesNeeded(strategy(over), mode)).toEqual({ required, optional });
  });
});

describe('strategyMayList', () => {
  it.each([
    [{}, true],
    [{ sell: { list: { markup: 1, only_when_better: true, fill: linearFill } } }, true],
    [{ sell: { list: { fill: neverFills } } }, false],
  ])('%o → %s', (over, expected) => {
    expect(strategyMayList(strategy(over))).toBe(expected);
  });
});

describe('missingScopes', () => {
  it.each([
    [['read:catalog', 'read:account', 'read:pulls', 'rip:packs', 'sell:cards', 'write:listings'], [], []],
    [['read:catalog', 'read:account', 'rip:packs'], ['sell:cards', 'write:listings'], ['read:pulls']],
    [[], [...READS, 'rip:packs', 'sell:cards', 'write:listings'], ['read:pulls']],
  ])('a key with %o lacks %o (required) and %o (optional)', (have, required, optional) => {
    expect(missingScopes(have, scopesNeeded(strategy(), 'live'))).toEqual({ required, optional });
  });
});
