/** End-to-end fixtures: a config file in a temp directory pointing at a simulator over HTTP. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { removeTempDirs, tempDir as scratchDir } from '../temp-dirs.js';

export { removeTempDirs };

export const ROOT = resolve(import.meta.dirname, '../..');
export const BALANCED = join(ROOT, 'strategies/balanced.yaml');

/** A new directory under the temp directory, removed by `removeTempDirs()` (../temp-dirs.ts). */
export function tempDir(prefix = 'packbot-e2e-'): string {
  return scratchDir(prefix);
}

export interface ConfigOptions {
  baseUrl: string;
  strategy?: string;
  mode?: 'live' | 'dry-run';
  keyEnv?: string;
  metricsPort?: number;
  extra?: string;
}

/** Writes `bot.yaml` into `dir` and returns its path. */
export function writeConfig(dir: string, o: ConfigOptions): string {
  const path = join(dir, 'bot.yaml');
  writeFileSync(
    path,
    [
      'format: packbot.config/v1',
      ...(o.mode ? [`mode: ${o.mode}`] : []),
      'api:',
      `  base_url: ${o.baseUrl}`,
      `  key_env: ${o.keyEnv ?? 'PB_TEST_KEY'}`,
      '  timeout_seconds: 10',
      'accounts:',
      '  - name: main',
      `    strategy: ${o.strategy ?? BALANCED}`,
      // The simulator is in-process on loopback: an order cannot still be running 5 s later.
      'orders:',
      '  settle_seconds: 5',
      'store:',
      `  path: ${join(dir, 'ledger.db')}`,
      'metrics:',
      `  port: ${o.metricsPort ?? 0}`,
      'log:',
      '  level: info',
      '  pretty: never',
      'polling:',
      '  account_seconds: 60',
      '  pools_seconds: 300',
      '  vault_seconds: 600',
      '  listings_seconds: 300',
      'control:',
      `  kill_switch_file: ${join(dir, 'pause')}`,
      o.extra ?? '',
    ].join('\n'),
  );
  return path;
}

/** Every metric DESIGN.md lists, plus a default process metric. */
export const DESIGN_METRICS = [
  'packbot_packs_opened_total',
  'packbot_spend_usd_total',
  'packbot_sellback_payout_usd_total',
  'packbot_balance_usd',
  'packbot_packs_left_today',
  'packbot_pack_ev_ratio',
  'packbot_api_requests_total',
  'packbot_api_request_duration_seconds',
  'packbot_sellback_window_missed_total',
  'packbot_decision_latency_seconds',
  'packbot_listings_active',
  'packbot_orders_in_doubt',
  'process_cpu_user_seconds_total',
];

/** The balanced strategy with a daily spend cap above 100 packs: the server's limits bind. */
export function generousStrategy(dir: string): string {
  const path = join(dir, 'strategy.yaml');
  writeFileSync(
    path,
    readFileSync(BALANCED, 'utf8')
      .replace(/max_daily_spend_usd: \d+/, 'max_daily_spend_usd: 100000')
      .replace(/max_total_spend_usd: \d+/, 'max_total_spend_usd: 1000000'),
  );
  return path;
}
