/**
 * The external programs of the operating stack (promtool, prometheus, amtool) and the dashboard's
 * browser: found or not. A test needing one that is absent is skipped, and says so once on the
 * console; in CI (`CI=true`), where `.ci/run` installs them, it fails instead.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The absolute path of `name` on PATH, or undefined. */
export function findProgram(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A CI run (`CI=true`, as CI services set it): `.ci/run` has installed every program below. */
const inCi = (): boolean => /^(true|1)$/i.test(process.env.CI ?? '');

/**
 * A program a test needs is missing: outside CI the test is skipped and a console line says which
 * and how to install it; in CI this throws, failing the test file (a skip there hides a broken
 * install).
 */
export function programMissing(what: string, skipped: string, install: string): void {
  if (inCi())
    throw new Error(`${what}, and CI=true: ${skipped} must run in CI (.ci/run installs it: ${install})`);
  console.warn(`${what}: skipping ${skipped} (Debian: ${install})`);
}

/** `findProgram`, with a console message naming what is skipped when the program is missing. */
export function requireProgram(name: string, skipped: string): string | undefined {
  const path = findProgram(name);
  if (!path)
    programMissing(
      `${name} not found on PATH`,
      skipped,
      'apt-get install prometheus prometheus-alertmanager',
    );
  return path;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to completion, `input` on its stdin; a hang is ended after `timeoutMs` (killed). */
export function run(
  program: string,
  args: string[],
  input?: string,
  timeoutMs = 120_000,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}
