/**
 * Process control: `packbot sim` and `packbot run` as real child processes of the built CLI,
 * with their output kept so a failed run can show what each process said last.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The project root: the nearest folder above this file (source or dist/) holding bin/packbot.js. */
function findRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'bin/packbot.js'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`chaos: bin/packbot.js not found above ${from}`);
    dir = up;
  }
  return dir;
}

const ROOT = findRoot(import.meta.dirname);
const BIN = join(ROOT, 'bin/packbot.js');
export const isBuilt = (): boolean => existsSync(join(ROOT, 'dist/src/cli/main.js'));

export interface Child {
  child: ChildProcess;
  /** stdout lines so far (the bot's are JSON log lines). */
  lines: string[];
  stderr: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first stdout line `test` accepts; rejects on exit or after `timeoutMs`. */
  waitLine(test: (line: string) => boolean, what: string, timeoutMs: number): Promise<string>;
  tail(n?: number): string;
}

function spawnCli(args: string[], env: Record<string, string> = {}): Child {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, PACKBOT_DEBUG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  const listeners = new Set<(line: string) => void>();
  let buf = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      // Only the last lines matter for a report; a long run must not grow without bound.
      if (lines.push(line) > 2000) lines.splice(0, 1000);
      for (const l of [...listeners]) l(line);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let exited = false;
  void exit.then(() => {
    exited = true;
  });
  const tail = (n = 30) => [...lines.slice(-n), ...stderr].join('\n');
  return {
    child,
    lines,
    stderr,
    exit,
    tail,
    waitLine(test, what, timeoutMs) {
      const found = lines.find(test);
      if (found !== undefined) return Promise.resolve(found);
      if (exited) return Promise.reject(new Error(`process exited before ${what}:\n${tail()}`));
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          listeners.delete(listener);
        };
        const listener = (line: string) => {
          if (!test(line)) return;
          done();
          resolve(line);
        };
        // A real timer: it bounds a child process, it is not a timing the suite checks.
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ${what} within ${timeoutMs} ms:\n${tail()}`));
        }, timeoutMs);
        listeners.add(listener);
        void exit.then(() => {
          done();
          reject(new Error(`process exited before ${what}:\n${tail()}`));
        });
      });
    },
  };
}

/** The message of a pino JSON line, or undefined. */
export function logMsg(line: string): string | undefined {
  return logField(line, 'msg');
}

/** A string field of a pino JSON line, or undefined. */
export function logField(line: string, field: string): string | undefined {
  try {
    const v = JSON.parse(line) as Record<string, unknown>;
    return typeof v[field] === 'string' ? v[field] : undefined;
  } catch {
    return undefined;
  }
}

export interface SimProcess {
  url: string;
  child: Child;
  stop(): Promise<void>;
}

/** Starts `packbot sim` on a free port and waits for its `listening on` line. */
export async function startSim(world: string, seed: number): Promise<SimProcess> {
  const child = spawnCli(['sim', '--port', '0', '--world', world, '--seed', String(seed)]);
  const line = await child.waitLine(
    (l) => l.startsWith('listening on '),
    "the simulator's 'listening on'",
    30_000,
  );
  return {
    url: line.slice('listening on '.length).trim(),
    child,
    async stop() {
      child.child.kill('SIGTERM');
      await child.exit;
    },
  };
}

export function startBot(config: string, env: Record<string, string>): Child {
  return spawnCli(['run', '--config', config], env);
}
