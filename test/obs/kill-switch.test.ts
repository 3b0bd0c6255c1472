import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { endpointPauseFile, KillSwitch, type PauseStatus } from '../../src/obs/kill-switch.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';

afterEach(removeTempDirs);

const dir = () => tempDir('packbot-ks-');

describe('KillSwitch', () => {
  it('an endpoint pause survives a restart; resume clears it for good', () => {
    const d = dir();
    const stateFile = join(d, 'data', 'ledger.db.paused');
    const first = new KillSwitch(undefined, () => 1000, undefined, { stateFile });
    first.pause();
    const second = new KillSwitch(undefined, () => 2000, undefined, { stateFile });
    expect(second.status()).toMatchObject({ paused: true, reasons: ['endpoint'], pausedAt: 1000 });
    second.resume();
    expect(existsSync(stateFile)).toBe(false);
    expect(new KillSwitch(undefined, () => 3000, undefined, { stateFile }).isPaused()).toBe(false);
  });

  it('an unreadable saved pause counts as paused', () => {
    const stateFile = join(dir(), 'x.paused');
    writeFileSync(stateFile, 'not json');
    expect(new KillSwitch(undefined, () => 0, undefined, { stateFile }).status().reasons).toEqual([
      'endpoint',
    ]);
  });

  it('without a state file the endpoint pause lives in memory only', () => {
    new KillSwitch(undefined, () => 0).pause();
    expect(new KillSwitch(undefined, () => 0).isPaused()).toBe(false);
  });

  it('reports each change of reasons, including the file seen appearing and going', () => {
    const file = join(dir(), 'pause');
    const seen: PauseStatus['reasons'][] = [];
    const ks = new KillSwitch(
      file,
      () => 0,
      (s) => seen.push(s.reasons),
    );
    ks.isPaused();
    ks.isPaused();
    writeFileSync(file, '');
    ks.isPaused();
    ks.pause();
    rmSync(file);
    ks.isPaused();
    ks.resume();
    expect(seen).toEqual([[], ['file'], ['file', 'endpoint'], ['endpoint'], []]);
  });

  it.each([
    ['data/packbot.db', 'data/packbot.db.paused'],
    [':memory:', undefined],
  ])('the pause of ledger %s is kept in %s', (ledger, file) => {
    expect(endpointPauseFile(ledger)).toBe(file);
  });

  it('nextChange aborts at the next change of reasons, or when its own signal does', () => {
    const file = join(dir(), 'pause');
    const ks = new KillSwitch(file, () => 0);
    ks.status();
    const stop = new AbortController();
    const change = ks.nextChange(stop.signal).signal;
    ks.status(); // nothing changed
    expect(change.aborted).toBe(false);
    ks.pause();
    expect(change.aborted).toBe(true);
    const again = ks.nextChange(stop.signal).signal;
    writeFileSync(file, '');
    expect(again.aborted).toBe(false); // the file is seen at the next check
    ks.status();
    expect(again.aborted).toBe(true);
    // A watch given up (its sleep ended) is forgotten.
    ks.nextChange(stop.signal).done();
    expect(ks.watchers).toBe(0);
    const last = ks.nextChange(stop.signal).signal;
    stop.abort();
    expect(last.aborted).toBe(true);
    expect(ks.watchers).toBe(0);
    rmSync(file);
  });
});
