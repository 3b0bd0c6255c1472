/**
 * One bot carrying many accounts (`npm run bench -- accounts`): `packbot run` with N accounts in a
 * process of its own against `packbot sim` in another, on the default world with STOCK times its
 * stock (pools of thousands of cards), every account on its own key opening one pack whenever its
 * rate limit allows (a purchase every GAP_S seconds). Measured for 1 account and for N, each on a
 * fresh simulator of the same world:
 * - slots used: every account's orders confirmed over WINDOW_MS once all have started, against the
 *   slots its rate limit allowed, goal ≥ 99%;
 * - the bot's RSS (median of the window's last 30 s, read once a second): N accounts over one,
 *   goal < +50 MiB;
 * - idle CPU: paused by the kill switch file, its CPU over IDLE_MS of wall time, goal < 1% of a core.
 * BENCH_ACCOUNTS (default 100) and BENCH_ACCOUNTS_WINDOW_S (default 300) change the run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parse } from 'yaml';
import { startSimProcess } from '../soak/sim-process.js';
import { SCOPES } from '../src/api/schemas.js';
import { repoRoot } from '../src/config/json-schemas.js';
import type { Benchmark, BenchResult } from './lib.js';
import { cpuMs, rssMib } from './proc.js';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 100);
const STOCK = 20;
/** The spec's default purchase speed: one purchase request a minute per key. */
const GAP_S = 60;
const WINDOW_MS = Number(process.env.BENCH_ACCOUNTS_WINDOW_S ?? 300) * 1000;
/** Longest wait for every account's first order (start-up is spread over ~20 s). */
const START_LIMIT_MS = 120_000;
const RSS_WINDOW_MS = 30_000;
const IDLE_SETTLE_MS = 20_000;
const IDLE_MS = 20_000;

const wallSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** The default world, STOCK times the cards in every band and shop, with `n` funded accounts. */
function benchWorld(n: number): unknown {
  const world = parse(readFileSync(join(repoRoot(), 'config/sim.yaml'), 'utf8')) as Record<string, unknown>;
  const scale = (node: unknown): void => {
    if (Array.isArray(node)) for (const x of node) scale(x);
    else if (node !== null && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (o.generate && typeof (o.generate as { count?: unknown }).count === 'number')
        (o.generate as { count: number }).count *= STOCK;
      for (const v of Object.values(o)) scale(v);
    }
  };
  scale(world.categories);
  const accounts = Array.from({ length: n }, (_, i) => ({
    id: `acct_${i + 1}`,
    username: `bench${i + 1}`,
    balance: 10_000_000,
  }));
  return {
    ...world,
    name: `default world, ${STOCK}x stock, ${n} accounts`,
    accounts: [...accounts, { id: 'acct_house', username: 'house', balance: 0, internal: true }],
    keys: accounts.map((a, i) => ({
      name: `bench-${i + 1}`,
      key: `sk_bench_${i + 1}`,
      scopes: [...SCOPES],
      account: a.id,
    })),
    rules: { ...(world.rules as object), min_seconds_between_purchases: GAP_S, max_packs_per_day: 1_000_000 },
  };
}

/** Balanced's selling, opening the best pack one at a time whatever its edge: it always wants a slot. */
function benchStrategy(): string {
  return readFileSync(join(repoRoot(), 'strategies/balanced.yaml'), 'utf8')
    .replace(/min_ev_ratio: [\d.]+/, 'min_ev_ratio: 0')
    .replace(/max_quantity: \d+/, 'max_quantity: 1')
    .replace(/sizing: kelly/, 'sizing: fixed')
    .replace(/max_daily_spend_usd: \d+/, 'max_daily_spend_usd: 10000000')
    .replace(/max_total_spend_usd: \d+/, 'max_total_spend_usd: 100000000')
    .replace(/stop_loss_usd: \d+/, 'stop_loss_usd: 100000000');
}

function botConfig(dir: string, url: string, n: number): string {
  const path = join(dir, 'bot.yaml');
  const accounts = Array.from({ length: n }, (_, i) => [
    `  - name: a${i + 1}`,
    '    strategy: strategy.yaml',
    `    key_env: BENCH_KEY_${i + 1}`,
  ]).flat();
  writeFileSync(
    path,
    [
      'format: packbot.config/v1',
      'api:',
      `  base_url: ${url}`,
      'accounts:',
      ...accounts,
      'store:',
      '  path: ledger.db',
      'metrics:',
      '  enabled: false',
      'log:',
      '  level: info',
      '  pretty: never',
      'control:',
      '  kill_switch_file: pause',
      '',
    ].join('\n'),
  );
  return path;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

interface Run {
  accounts: number;
  started: number;
  slotsUsed: number;
  slotsAllowed: number;
  rssMib: number;
  idleCpu: number;
}

/** One run: `n` accounts of the world trading, then paused. */
async function run(n: number, worldFile: string): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'packbot-bench-accounts-'));
  writeFileSync(join(dir, 'strategy.yaml'), benchStrategy());
  const sim = await startSimProcess({ root: repoRoot(), world: worldFile, seed: 1, speed: 1 });
  const env: Record<string, string> = { ...process.env } as Record<string, string>;
  for (let i = 1; i <= n; i++) env[`BENCH_KEY_${i}`] = `sk_bench_${i}`;
  const bot: ChildProcess = spawn(
    process.execPath,
    [join(repoRoot(), 'bin/packbot.js'), 'run', '--config', botConfig(dir, sim.url, n)],
    { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  bot.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  // Each account's confirmed orders, by wall time of the log line.
  const orders = new Map<string, number[]>();
  createInterface({ input: bot.stdout! }).on('line', (line) => {
    if (!line.includes('"order confirmed"')) return;
    const account = /"account":"([^"]+)"/.exec(line)?.[1];
    if (account) orders.set(account, [...(orders.get(account) ?? []), performance.now()]);
  });
  const exited = new Promise<void>((r) => bot.once('exit', () => r()));
  try {
    const t0 = performance.now();
    while (orders.size < n && performance.now() - t0 < START_LIMIT_MS) {
      if (bot.exitCode !== null) throw new Error(`packbot run exited (${bot.exitCode}): ${stderr}`);
      await wallSleep(250);
    }
    const started = orders.size;
    // The window opens one slot after the last account's first order.
    const from = performance.now() + GAP_S * 1000;
    const to = from + WINDOW_MS;
    const rss: number[] = [];
    while (performance.now() < to) {
      if (bot.exitCode !== null) throw new Error(`packbot run exited (${bot.exitCode}): ${stderr}`);
      await wallSleep(1000);
      if (performance.now() >= to - RSS_WINDOW_MS) rss.push(rssMib(bot.pid!));
    }
    let used = 0;
    for (const times of orders.values()) used += times.filter((t) => t >= from && t < to).length;
    writeFileSync(join(dir, 'pause'), 'bench\n');
    await wallSleep(IDLE_SETTLE_MS);
    const c0 = cpuMs(bot.pid!);
    const w0 = performance.now();
    await wallSleep(IDLE_MS);
    const idleCpu = ((cpuMs(bot.pid!) - c0) / (performance.now() - w0)) * 100;
    return {
      accounts: n,
      started,
      slotsUsed: used,
      slotsAllowed: Math.floor(n * (WINDOW_MS / (GAP_S * 1000))),
      rssMib: median(rss),
      idleCpu,
    };
  } finally {
    bot.kill('SIGTERM');
    await exited;
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const bench: Benchmark = {
  name: 'accounts',
  async run(): Promise<BenchResult[]> {
    const dir = mkdtempSync(join(tmpdir(), 'packbot-bench-world-'));
    const worldFile = join(dir, 'world.json');
    writeFileSync(worldFile, JSON.stringify(benchWorld(ACCOUNTS)));
    try {
      const one = await run(1, worldFile);
      const many = await run(ACCOUNTS, worldFile);
      const extra = many.rssMib - one.rssMib;
      const share = many.slotsUsed / many.slotsAllowed;
      return [
        {
          name: `accounts: ${ACCOUNTS} over 1, RSS, ${STOCK}x stock`,
          value: `+${extra.toFixed(1)} MiB (1: ${one.rssMib.toFixed(1)}, ${ACCOUNTS}: ${many.rssMib.toFixed(1)})`,
          ratio: extra / 50,
          goal: '< +50 MiB (ratio < 1)',
          ok: extra < 50,
        },
        {
          name: `accounts: ${ACCOUNTS}, slots used over ${WINDOW_MS / 1000} s`,
          value: `${many.slotsUsed}/${many.slotsAllowed} (${many.started} of ${ACCOUNTS} started)`,
          ratio: share,
          goal: '≥ 0.99',
          ok: share >= 0.99 && many.started === ACCOUNTS,
        },
        {
          name: `accounts: ${ACCOUNTS}, idle CPU, paused, ${IDLE_MS / 1000} s wall`,
          value: `${many.idleCpu.toFixed(2)}% of a core (1 account: ${one.idleCpu.toFixed(2)}%)`,
          ratio: many.idleCpu / 1,
          goal: '< 1% (ratio < 1)',
          ok: many.idleCpu < 1,
        },
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
