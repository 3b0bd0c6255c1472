/**
 * Gives the test run its own temp directory and fails the run if a test leaves anything in it.
 *
 * Every temp directory a test makes (test/temp-dirs.ts, or `mkdtempSync(join(tmpdir(), …))`) and
 * every process it spawns live under `os.tmpdir()`, which reads TMPDIR at each call. Setting
 * TMPDIR here, before vitest starts its workers (they and the bots they spawn inherit the
 * environment), puts all of them in one directory that belongs to this run alone: other runs on the
 * same machine cannot make this check flaky, and whatever is left is removed with the directory.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), 'packbot-test-'));
  // mkdtemp makes it 0700; a test that runs the bot as another user (test/deploy/container-tree)
  // needs to reach its directory inside, as it could in /tmp.
  chmodSync(root, 0o755);
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    const left = readdirSync(root);
    rmSync(root, { recursive: true, force: true });
    if (left.length === 0) return;
    // A thrown error here is only logged by vitest; the exit code is what CI and `npm test` see.
    process.exitCode = 1;
    console.error(
      `\nFAIL the tests left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in their temp directory ` +
        `(now removed; a test removes what it makes, see test/temp-dirs.ts):\n  ${left.join('\n  ')}\n`,
    );
  };
}
