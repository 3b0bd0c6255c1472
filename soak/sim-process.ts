/**
 * The simulator in its own process (`packbot sim --speed S`), so the soak's memory, handles and
 * event loop are the bot's alone. Its clock is followed exactly from its anchor (GET
 * /sim/v1/clock): both processes read the same system clock. Its own figures (resident memory,
 * cards held and released) are read beside the bot's, for information.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ScaledClock } from '../src/core/clock.js';

export interface SimProcess {
  url: string;
  pid: number;
  /** The bot's clock: the simulator's, rebuilt from its anchor. */
  clock: ScaledClock;
  /** Resident memory of the simulator process (MB; NaN where /proc is not there). */
  rssMb(): number;
  /** Cards the simulator holds, and those simulated other users took that it released. */
  cards(): Promise<{ held: number; released: number }>;
  stop(): Promise<void>;
}

interface ClockAnswer {
  now: string;
  speed?: number;
  anchor?: { wall_ms: number; sim_ms: number };
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** Starts `packbot sim` (the built CLI under `root`) and waits for its `listening on` line. */
export async function startSimProcess(o: {
  root: string;
  world: string;
  seed: number;
  speed: number;
}): Promise<SimProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(o.root, 'bin/packbot.js'),
      'sim',
      '--port',
      '0',
      '--world',
      o.world,
      '--seed',
      String(o.seed),
      '--speed',
      String(o.speed),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // The simulator never outlives the soak, however the soak ends (run.ts turns SIGINT and SIGTERM
  // into an exit, which runs this).
  const orphanGuard = () => child.kill('SIGTERM');
  process.once('exit', orphanGuard);
  void exited.then(() => process.off('exit', orphanGuard));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /^listening on (http:\/\/\S+)$/.exec(line);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`packbot sim exited (${code}) before listening: ${stderr}`)));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    const c = await getJson<ClockAnswer>(`${url}/sim/v1/clock`);
    if (!c.anchor || c.speed !== o.speed)
      throw new Error(`packbot sim gave no clock anchor at speed ${o.speed}`);
    const clock = new ScaledClock(c.anchor.sim_ms, c.speed, c.anchor.wall_ms);
    return {
      url,
      pid: child.pid!,
      clock,
      rssMb: () => {
        try {
          const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
          return kb === undefined ? Number.NaN : Number(kb) / 1024;
        } catch {
          return Number.NaN;
        }
      },
      cards: async () => {
        const s = await getJson<{ cards_by_location?: Record<string, number>; cards_released?: number }>(
          `${url}/sim/v1/state`,
        );
        const held = Object.values(s.cards_by_location ?? {}).reduce((a, n) => a + n, 0);
        return { held, released: s.cards_released ?? 0 };
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Writes `dir`/bot.yaml: one account trading `strategy` against the simulator at `url` (its key in
 * the environment variable `keyEnv`), its ledger and kill-switch file in `dir`, JSON logs, and
 * metrics on `metricsPort` when given. Returns the file's path.
 */
export function writeBotConfig(
  dir: string,
  o: { url: string; keyEnv: string; strategy: string; metricsPort?: number },
): string {
  const path = join(dir, 'bot.yaml');
  const metrics =
    o.metricsPort === undefined ? ['  enabled: false'] : ['  enabled: true', `  port: ${o.metricsPort}`];
  writeFileSync(
    path,
    [
      'format: packbot.config/v1',
      'api:',
      `  base_url: ${o.url}`,
      `  key_env: ${o.keyEnv}`,
      'accounts:',
      '  - name: main',
      `    strategy: ${o.strategy}`,
      'store:',
      `  path: ${join(dir, 'ledger.db')}`,
      'metrics:',
      ...metrics,
      'log:',
      '  level: info',
      '  pretty: never',
      'control:',
      `  kill_switch_file: ${join(dir, 'pause')}`,
      '',
    ].join('\n'),
  );
  return path;
}
