/**
 * A real bot (the built CLI on the embedded simulator) under the real programs: `promtool check
 * metrics` on its `/metrics` prints nothing, and a real `prometheus` on a free loopback port, with
 * the project's alert rules, scrapes it. Skipped, with a message, when a program is missing (in CI,
 * `CI=true`, the file fails instead).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir, writeConfig } from '../e2e/helpers.js';
import { type BotProcess, built, startBot, stopBots } from '../e2e/process.js';
import { requireProgram, run } from './programs.js';
import { ALERTS_PATH, alertRules, exportedNames } from './promql.js';

const promtool = requireProgram('promtool', 'promtool check metrics on a running bot');
const prometheus = requireProgram('prometheus', 'scraping a running bot with a real Prometheus');
const needed = built() && (promtool !== undefined || prometheus !== undefined);

/** A port free on 127.0.0.1 right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Polls `probe` until it returns a value, at most `timeoutMs` (a bound, not a timing). */
async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!needed)('a running bot under the real Prometheus tools', () => {
  let dir: string;
  let bot: BotProcess;
  let metricsUrl: string;

  beforeAll(async () => {
    dir = tempDir('packbot-deploy-');
    const config = writeConfig(dir, { baseUrl: 'embedded', keyEnv: 'PB_UNSET_KEY' });
    bot = startBot(['run', '--config', config]);
    metricsUrl = String((await bot.waitFor('metrics server listening')).url);
    // Trading: the labelled series (packs opened, API requests by endpoint, histograms) exist.
    await bot.waitFor('order confirmed');
    await bot.waitFor('sold back');
  });

  afterAll(async () => {
    try {
      if (bot && bot.child.exitCode === null) {
        bot.child.kill('SIGTERM');
        expect((await bot.exit).code).toBe(0);
      }
    } finally {
      // Also when the bot did not stop cleanly: killed, then its directory removed.
      await stopBots();
      removeTempDirs();
    }
  });

  it.skipIf(!promtool)('promtool check metrics prints nothing for /metrics', async () => {
    const text = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(text).toMatch(/packbot_packs_opened_total\{[^}]+\} [1-9]/);
    const r = await run(promtool!, ['check', 'metrics'], text);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it.skipIf(!prometheus)('prometheus scrapes the bot and loads the project alert rules', async () => {
    const port = await freePort();
    const target = new URL(metricsUrl).host;
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${JSON.stringify(ALERTS_PATH)}`,
        'scrape_configs:',
        '  - job_name: packbot',
        '    static_configs:',
        `      - targets: [${JSON.stringify(target)}]`,
        '',
      ].join('\n'),
    );
    const logs: string[] = [];
    const prom: ChildProcess = spawn(
      prometheus!,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prom.stdout!.on('data', (c: Buffer) => logs.push(c.toString('utf8')));
    prom.stderr!.on('data', (c: Buffer) => logs.push(c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => prom.on('exit', (code) => resolve(code)));
    const api = `http://127.0.0.1:${port}/api/v1`;
    type Sample = { metric: Record<string, string>; value: [number, string] };
    const query = async (q: string): Promise<Sample[] | undefined> => {
      const res = await fetch(`${api}/query?query=${encodeURIComponent(q)}`);
      if (!res.ok) return undefined;
      const body = (await res.json()) as { data: { result: Sample[] } };
      return body.data.result.length > 0 ? body.data.result : undefined;
    };
    try {
      const up = await until(() => query('up{job="packbot"}'), 120_000, `first scrape\n${logs.join('')}`);
      expect(up[0]!.value[1]).toBe('1');
      expect(up[0]!.metric.instance).toBe(target);
      const balance = await until(() => query('packbot_balance_usd'), 120_000, 'packbot_balance_usd');
      expect(Number(balance[0]!.value[1])).toBeGreaterThan(0);

      // Every series name Prometheus stored is one the bot exports (or Prometheus's own).
      const names = (await (await fetch(`${api}/label/__name__/values`)).json()) as { data: string[] };
      const text = await (await fetch(`${metricsUrl}/metrics`)).text();
      const exported = exportedNames(text);
      const stray = names.data.filter((n) => !exported.has(n) && !/^(up|scrape_\w+|ALERTS\w*)$/.test(n));
      expect(stray).toEqual([]);

      const rules = (await (await fetch(`${api}/rules`)).json()) as {
        data: { groups: { file: string; rules: { name: string; health: string }[] }[] };
      };
      const loaded = rules.data.groups.flatMap((g) => g.rules);
      expect(loaded.map((r) => r.name).sort()).toEqual(
        alertRules()
          .map((r) => r.alert)
          .sort(),
      );
      expect(rules.data.groups[0]!.file).toBe(ALERTS_PATH);
      // Evaluated against the live series at least once, without an error.
      await until(
        async () => {
          const r = (await (await fetch(`${api}/rules`)).json()) as typeof rules;
          const all = r.data.groups.flatMap((g) => g.rules);
          return all.every((x) => x.health === 'ok') ? true : undefined;
        },
        120_000,
        'every rule evaluated',
      );
    } finally {
      prom.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
