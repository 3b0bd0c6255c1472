/**
 * The security settings of a bot config: TLS for a key that leaves the machine, the Host
 * allow-list, the `/metrics` token and the response cap. `packbot validate` and `packbot run` both
 * refuse an http: URL beyond loopback with exit 2 naming `api.base_url`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { InputFileError } from '../../src/config/load.js';
import { runCli } from '../cli/run-cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'packbot-sec-'));
  mkdirSync(join(dir, 'strategies'));
  writeFileSync(join(dir, 'strategies', 's.yaml'), 'format: packbot.strategy/v1\nname: s\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(api: string, extra = ''): string {
  const p = join(dir, 'bot.yaml');
  writeFileSync(
    p,
    `format: packbot.config/v1\nmode: live\napi:\n${api}accounts:\n  - name: main\n    strategy: strategies/s.yaml\n${extra}`,
  );
  return p;
}

function issues(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InputFileError);
    return (e as InputFileError).message;
  }
  throw new Error('expected an InputFileError');
}

const KEY = { PARTNER_API_KEY: 'sk_live_0123456789' };

describe('TLS for real keys', () => {
  it('refuses an http: URL beyond loopback, naming api.base_url with its line', () => {
    const path = write('  base_url: http://partner.example.com\n');
    expect(issues(() => loadBotConfig(path, KEY))).toMatch(
      /bot\.yaml:4:13: api\.base_url: must be https: beyond loopback .*allow_insecure_http/,
    );
    // In dry-run too: reads carry the key as well.
    expect(issues(() => loadBotConfig(path, KEY, { forceDryRun: true }))).toContain('api.base_url');
  });

  it('accepts https:, loopback http: and embedded', () => {
    for (const url of [
      'https://partner.example.com',
      'http://127.0.0.1:8787',
      'http://localhost:1',
      'http://[::1]:8787',
    ])
      expect(loadBotConfig(write(`  base_url: ${url}\n`), KEY).api.insecureHttp, url).toBe(false);
  });

  it('accepts http: beyond loopback when the operator writes api.allow_insecure_http', () => {
    const cfg = loadBotConfig(
      write('  base_url: http://partner.example.com\n  allow_insecure_http: true\n'),
      KEY,
    );
    expect(cfg.api.insecureHttp).toBe(true);
  });

  it('`packbot validate` exits 2 naming api.base_url', async () => {
    const path = write('  base_url: http://partner.example.com\n');
    const r = await runCli(['validate', path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('api.base_url: must be https:');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('metrics settings', () => {
  it('allowed_hosts and the /metrics token', () => {
    const path = write(
      '  base_url: embedded\n',
      'metrics:\n  allowed_hosts: [packbot, bot.example.com]\n  token_env: METRICS_TOKEN\n',
    );
    const cfg = loadBotConfig(path, { METRICS_TOKEN: 'metrics-token-0123456789' });
    expect(cfg.metrics.allowedHosts).toEqual(['packbot', 'bot.example.com']);
    expect(cfg.metrics.token()).toBe('metrics-token-0123456789');
    expect(JSON.stringify(cfg)).not.toContain('metrics-token-0123456789');
    expect(cfg.secrets()).toContain('metrics-token-0123456789');
    // Named but unset: an error, not an open /metrics (validate does not judge the environment).
    expect(issues(() => loadBotConfig(path, {}))).toMatch(
      /metrics\.token_env: environment variable METRICS_TOKEN is not set/,
    );
    expect(loadBotConfig(path, {}, { ignoreEnv: true }).metrics.token()).toBeUndefined();
    expect(issues(() => loadBotConfig(path, { METRICS_TOKEN: 'short' }))).toContain('too short');
  });

  it('refuses a host with a port or a scheme', () => {
    const path = write('  base_url: embedded\n', 'metrics:\n  allowed_hosts: ["http://packbot:9464"]\n');
    expect(issues(() => loadBotConfig(path, {}))).toMatch(/metrics\.allowed_hosts\[0\]: must be a host name/);
  });
});

describe('api.max_response_mb', () => {
  it('defaults to 32 MiB', () => {
    expect(loadBotConfig(write('  base_url: embedded\n'), {}).api.maxResponseBytes).toBe(32 * 1024 * 1024);
    expect(
      loadBotConfig(write('  base_url: embedded\n  max_response_mb: 1.5\n'), {}).api.maxResponseBytes,
    ).toBe(1.5 * 1024 * 1024);
  });
});
