import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adoptLegacyState, embeddedStatePath } from '../../src/bot/embedded.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';

afterEach(removeTempDirs);

describe('embedded simulator state file', () => {
  it.each([
    ['data/packbot.db', 'data/packbot.sim-state'],
    ['data/packbot.dry-run.db', 'data/packbot.dry-run.sim-state'],
    ['/x/ledger', '/x/ledger.sim-state'],
    ['/x/ledger.sqlite', '/x/ledger.sqlite.sim-state'],
  ])('%s keeps its state in %s', (ledger, state) => {
    expect(embeddedStatePath(ledger)).toBe(state);
  });

  it('adopts the old shared name once, when it is the only state in the directory', () => {
    const dir = tempDir('packbot-state-');
    writeFileSync(join(dir, 'embedded-sim.state'), 'old');
    const a = embeddedStatePath(join(dir, 'a.db'));
    expect(adoptLegacyState(a)).toBe(join(dir, 'embedded-sim.state'));
    expect(readFileSync(a, 'utf8')).toBe('old');
    // A second ledger in the same directory never gets the first one's market.
    expect(adoptLegacyState(embeddedStatePath(join(dir, 'b.db')))).toBeUndefined();
    expect(existsSync(join(dir, 'b.sim-state'))).toBe(false);
  });

  it('leaves the old file alone when the ledger already has its own', () => {
    const dir = tempDir('packbot-state-');
    writeFileSync(join(dir, 'embedded-sim.state'), 'old');
    writeFileSync(join(dir, 'a.sim-state'), 'new');
    expect(adoptLegacyState(join(dir, 'a.sim-state'))).toBeUndefined();
    expect(readFileSync(join(dir, 'a.sim-state'), 'utf8')).toBe('new');
  });
});
