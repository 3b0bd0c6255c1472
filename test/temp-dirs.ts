/**
 * Scratch directories for tests, each removed by the test file that made it: a file calls
 * `removeTempDirs` in `afterEach` when its tests make their own directories, in `afterAll` when
 * one is shared, and only after every process writing into them has stopped (`stopBots` in
 * test/e2e/process.ts). test/global-setup.ts fails the run if one is left behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A new directory under the temp directory, removed by the next `removeTempDirs()`. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every directory `tempDir` made in this test file and not yet removed. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
