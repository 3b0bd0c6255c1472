/** Runs the built CLI (`bin/packbot.js`) as a child process and watches its JSON log lines. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

export const BIN = join(ROOT, 'bin/packbot.js');
export const built = (): boolean => existsSync(join(ROOT, 'dist/src/bot/runner.js'));

export interface BotProcess {
  child: ChildProcess;
  lines: string[];
  stderr: string[];
  /** Resolves with the first log line whose message matches. */
  waitFor(msg: string | RegExp, timeoutMs?: number): Promise<Record<string, unknown>>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

/**
 * Kills (SIGKILL) every process `startBot` started that is still running and waits for each to exit:
 * a test that failed midway leaves its bot running, and the bot must not outlive the test nor write
 * into a directory being removed. Call it in `afterEach` (or `afterAll` for a bot shared by the file)
 * before `removeTempDirs`.
 */
export async function stopBots(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      running.delete(child);
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }),
  );
}

export interface StartOptions {
  /** Another install's `bin/packbot.js` (test/deploy runs the image's tree). */
  bin?: string;
  /** Run as this user and group (a root test running the bot as `nobody`). */
  uid?: number;
  gid?: number;
}

export function startBot(
  args: string[],
  env: Record<string, string> = {},
  cwd = ROOT,
  options: StartOptions = {},
): BotProcess {
  const child = spawn(process.execPath, [options.bin ?? BIN, ...args], {
    cwd,
    env: { ...process.env, ...env, PACKBOT_DEBUG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {}),
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const lines: string[] = [];
  const stderr: string[] = [];
  const waiters: { test: (m: string) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  let buf = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    let i = buf.indexOf('\n');
    while (i >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        for (const w of [...waiters])
          if (w.test(String(parsed.msg))) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(parsed);
          }
      } catch {
        // not JSON: kept in `lines` for the assertions
      }
      i = buf.indexOf('\n');
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    stderr,
    exit,
    waitFor(msg, timeoutMs = 120_000) {
      const test = (m: string) => (typeof msg === 'string' ? m === msg : msg.test(m));
      for (const l of lines) {
        try {
          const parsed = JSON.parse(l) as Record<string, unknown>;
          if (test(String(parsed.msg))) return Promise.resolve(parsed);
        } catch {
          // ignore
        }
      }
      return new Promise((resolve, reject) => {
        // A real timer: this bounds a child process, it is not the bot's timing.
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `no log line '${msg}' within ${timeoutMs} ms:\n${lines.slice(-60).join('\n')}\n${stderr.join('')}`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({
          test,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
        void exit.then(() => {
          clearTimeout(timer);
          reject(
            new Error(`bot exited before '${msg}':\n${lines.slice(-60).join('\n')}\n${stderr.join('')}`),
          );
        });
      });
    },
  };
}
