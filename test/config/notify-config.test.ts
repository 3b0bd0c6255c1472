/**
 * The `notify` section: each webhook has exactly one of url and url_env, a known format (telegram
 * with its chat id), known events; every problem names file, line and field, and `packbot run`
 * exits 2 on it. Webhook URLs are secrets: never serialised, registered for masking.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { InputFileError } from '../../src/config/load.js';
import { urlSecrets } from '../../src/config/notify-config.js';
import { runCli } from '../cli/run-cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'packbot-notify-cfg-'));
  mkdirSync(join(dir, 'strategies'));
  writeFileSync(join(dir, 'strategies', 's.yaml'), 'format: packbot.strategy/v1\nname: s\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const HEAD = [
  'format: packbot.config/v1',
  'api:',
  '  base_url: http://127.0.0.1:1',
  'accounts:',
  '  - name: main',
  '    strategy: strategies/s.yaml',
  'notify:',
  '  webhooks:',
];

function write(...hook: string[]): string {
  const p = join(dir, 'bot.yaml');
  writeFileSync(p, [...HEAD, ...hook, ''].join('\n'));
  return p;
}

function issues(path: string, env: NodeJS.ProcessEnv = { PARTNER_API_KEY: 'sk_x' }) {
  try {
    loadBotConfig(path, env);
  } catch (e) {
    expect(e).toBeInstanceOf(InputFileError);
    return (e as InputFileError).issues.map((i) => `${i.line}:${i.path}: ${i.message}`);
  }
  throw new Error('expected an InputFileError');
}

const SECRET_URL = 'https://hooks.example.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX';

describe('notify config', () => {
  it('is off when absent; resolves webhooks with defaults, the URL hidden', () => {
    const p = join(dir, 'plain.yaml');
    writeFileSync(p, HEAD.slice(0, 6).join('\n'));
    expect(loadBotConfig(p, { PARTNER_API_KEY: 'sk_x' }).notify).toBeUndefined();

    const cfg = loadBotConfig(
      write('    - url_env: HOOK', '      format: slack', '      events: [fatal, paused]'),
      { PARTNER_API_KEY: 'sk_x', HOOK: SECRET_URL },
    );
    expect(cfg.notify).toMatchObject({
      bigPullMultiple: 10,
      queueSize: 100,
      timeoutMs: 10_000,
      maxAttempts: 5,
    });
    const hook = cfg.notify!.webhooks[0]!;
    expect(hook).toMatchObject({ name: 'webhooks[0]', format: 'slack', events: ['fatal', 'paused'] });
    expect(hook.url()).toBe(SECRET_URL);
    expect(JSON.stringify(cfg)).not.toContain('hooks.example.com');
    expect(cfg.secrets()).toContain(SECRET_URL);
    expect(cfg.secrets()).toContain('XXXXXXXXXXXXXXXXXXXXXXXX');
  });

  it('needs exactly one of url and url_env', () => {
    expect(issues(write('    - format: json', '      events: [fatal]'))).toEqual([
      '9:notify.webhooks[0]: exactly one of url and url_env is required',
    ]);
    expect(
      issues(
        write(
          '    - url: http://127.0.0.1:9/x',
          '      url_env: HOOK',
          '      format: json',
          '      events: [fatal]',
        ),
      ),
    ).toEqual(['10:notify.webhooks[0].url_env: exactly one of url and url_env is required']);
  });

  it('names an unknown event, a bad format and a telegram hook without chat id', () => {
    expect(
      issues(write('    - url: http://127.0.0.1:9/x', '      format: json', '      events: [fatal, lunch]')),
    ).toEqual([
      expect.stringMatching(/^11:notify\.webhooks\[0\]\.events\[1\]: must be one of order_confirmed/),
    ]);
    expect(
      issues(write('    - url: http://127.0.0.1:9/x', '      format: teams', '      events: [fatal]')),
    ).toEqual(['10:notify.webhooks[0].format: must be one of json, discord, slack, telegram']);
    expect(
      issues(write('    - url: http://127.0.0.1:9/x', '      format: telegram', '      events: [fatal]')),
    ).toEqual(['10:notify.webhooks[0].format: telegram needs chat_id']);
    expect(
      issues(write('    - url: ftp://x', '      format: json', '      events: [fatal]', '      extra: 1')),
    ).toEqual([
      '9:notify.webhooks[0].url: must be an http(s) URL',
      expect.stringMatching(/^9:notify\.webhooks\[0\]: Unrecognized key: "extra"/),
    ]);
  });

  it('names an unset or non-URL variable at url_env, never its value', () => {
    const p = write('    - url_env: HOOK', '      format: discord', '      events: [fatal]');
    expect(issues(p)).toEqual([
      '9:notify.webhooks[0].url_env: environment variable HOOK is not set (the URL of this webhook)',
    ]);
    const bad = issues(p, { PARTNER_API_KEY: 'sk_x', HOOK: 'not a url secret-ish' });
    expect(bad).toEqual([
      '9:notify.webhooks[0].url_env: environment variable HOOK does not hold an http(s) URL',
    ]);
    expect(bad.join()).not.toContain('secret-ish');
  });

  it('packbot run exits 2 naming file, line and field', async () => {
    const p = write('    - url: http://127.0.0.1:9/x', '      format: json', '      events: [lunch]');
    const { code, stderr } = await runCli(['run', '--config', p]);
    expect(code).toBe(2);
    expect(stderr).toContain(`${p}:11:`);
    expect(stderr).toContain('notify.webhooks[0].events[0]');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('masks a Telegram token in the path', () => {
    const url = 'https://api.telegram.org/bot123456:ABCdefGHIjklMNOpqr/sendMessage';
    expect(urlSecrets(url)).toEqual([url, 'bot123456:ABCdefGHIjklMNOpqr', 'bot123456:ABCdefGHIjklMNOpqr']);
  });
});
