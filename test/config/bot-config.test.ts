import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BotConfigFile, EMBEDDED_DEV_KEY, loadBotConfig } from '../../src/config/bot-config.js';
import { InputFileError, parseSource, validateSource } from '../../src/config/load.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'packbot-cfg-'));
  mkdirSync(join(dir, 'strategies'));
  writeFileSync(join(dir, 'strategies', 's.yaml'), 'format: packbot.strategy/v1\nname: s\n');
  writeFileSync(join(dir, 'world.yaml'), readFileSync('config/sim.yaml', 'utf8'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(text: string): string {
  const p = join(dir, 'bot.yaml');
  writeFileSync(p, text);
  return p;
}

const ACCOUNTS = 'accounts:\n  - name: main\n    strategy: strategies/s.yaml\n';
const base = (url: string, extra = '') =>
  `format: packbot.config/v1\n${extra}api:\n  base_url: ${url}\n${ACCOUNTS}`;

function failure(fn: () => unknown): InputFileError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InputFileError);
    return e as InputFileError;
  }
  throw new Error('expected an InputFileError');
}

describe('loadBotConfig', () => {
  it('applies documented defaults and resolves paths', () => {
    const cfg = loadBotConfig(write(base('embedded')), {});
    expect(cfg.mode).toBe('live');
    expect(cfg.api).toEqual({
      baseUrl: 'embedded',
      embedded: true,
      loopback: true,
      timeoutMs: 30_000,
      insecureHttp: false,
      maxResponseBytes: 32 * 1024 * 1024,
    });
    // Beside the config file (the temp dir), not under the working directory.
    expect(cfg.store.path).toBe(join(dir, 'data/packbot.db'));
    expect(cfg.metrics).toEqual({ enabled: true, host: '127.0.0.1', port: 9464, allowedHosts: [] });
    expect(cfg.log.level).toBe('info');
    expect(cfg.polling).toEqual({
      accountMs: 60_000,
      poolsMs: 300_000,
      vaultMs: 600_000,
      listingsMs: 300_000,
      shopMs: 900_000,
    });
    expect(cfg.sellback).toEqual({ safetyMarginMs: 60_000, batchSize: 10 });
    expect(cfg.accounts[0]?.strategyPath).toBe(resolve(dir, 'strategies/s.yaml'));
    expect(cfg.accounts[0]?.keyEnv).toBe('PARTNER_API_KEY');
    expect(cfg.control.killSwitchFile).toBe(join(dir, 'data/packbot.pause'));
    expect(cfg.control.token()).toBeUndefined();
    expect(Object.isFrozen(cfg) && Object.isFrozen(cfg.accounts[0])).toBe(true);
  });

  it('uses the dev key for embedded when the variable is unset, the variable otherwise', () => {
    expect(loadBotConfig(write(base('embedded')), {}).accounts[0]?.apiKey()).toBe(EMBEDDED_DEV_KEY);
    expect(loadBotConfig(write(base('embedded')), { PARTNER_API_KEY: 'sk_mine' }).accounts[0]?.apiKey()).toBe(
      'sk_mine',
    );
  });

  it('names the missing key VARIABLE with its position, never a value', () => {
    const err = failure(() => loadBotConfig(write(base('https://api.example.com')), { OTHER: 'sk_secret' }));
    expect(err.message).toMatch(
      /bot\.yaml:\d+:\d+: api\.key_env: environment variable PARTNER_API_KEY is not set/,
    );
    expect(err.message).not.toContain('sk_secret');
    const perAccount = failure(() =>
      loadBotConfig(
        write(
          'format: packbot.config/v1\napi:\n  base_url: https://api.example.com\naccounts:\n  - name: a\n    key_env: KEY_A\n    strategy: strategies/s.yaml\n',
        ),
        {},
      ),
    );
    expect(perAccount.issues[0]).toMatchObject({ line: 6, path: 'accounts[0].key_env' });
    expect(perAccount.message).toContain('KEY_A');
  });

  it('defaults a remote URL to dry-run; live needs `mode: live` written in the file', () => {
    const env = { PARTNER_API_KEY: 'sk_live_1234' };
    expect(loadBotConfig(write(base('https://api.example.com')), env).mode).toBe('dry-run');
    const live = loadBotConfig(write(base('https://api.example.com', 'mode: live\n')), env);
    expect(live.mode).toBe('live');
    expect(live.api.loopback).toBe(false);
    expect(loadBotConfig(write(base('http://127.0.0.1:8080')), env).mode).toBe('live');
    expect(loadBotConfig(write(base('http://[::1]:8080')), env).mode).toBe('live');
    expect(
      loadBotConfig(write(base('http://localhost:8080', 'mode: live\n')), env, { forceDryRun: true }).mode,
    ).toBe('dry-run');
  });

  it('never exposes keys or the control token when the config is serialised', () => {
    const env = { PARTNER_API_KEY: 'sk_secret_value_1', TOKEN: 'tok_0123456789abcdef' };
    const cfg = loadBotConfig(write(`${base('embedded')}control:\n  token_env: TOKEN\n`), env);
    const text =
      JSON.stringify(cfg) + String(Object.keys(cfg.accounts[0]!)) + JSON.stringify({ ...cfg.control });
    expect(text).not.toContain('sk_secret_value_1');
    expect(text).not.toContain('tok_0123456789abcdef');
    expect(cfg.control.token()).toBe('tok_0123456789abcdef');
    expect(cfg.secrets().sort()).toEqual(['sk_secret_value_1', 'tok_0123456789abcdef']);
  });

  it('rejects bad fields with file:line:column and field path', () => {
    const err = failure(() =>
      loadBotConfig(
        write(
          `${base('embedded')}metrics:\n  port: 70000\nsellback:\n  safety_margin_seconds: 1\nstowaway: true\n`,
        ),
        {},
      ),
    );
    const paths = err.issues.map((i) => `${i.line}:${i.path}`);
    expect(paths).toEqual(
      expect.arrayContaining(['8:metrics.port', '10:sellback.safety_margin_seconds', '1:']),
    );
    expect(err.message).toMatch(/bot\.yaml:8:\d+: metrics\.port:/);
  });

  it('rejects a bad URL, a wrong format, no accounts, duplicates and missing files', () => {
    expect(failure(() => loadBotConfig(write(base('ftp://x')), {})).issues[0]?.path).toBe('api.base_url');
    expect(failure(() => loadBotConfig(write(base('https://u:p@x.example')), {})).message).toMatch(
      /credentials/,
    );
    expect(
      failure(() => loadBotConfig(write(base('embedded').replace('v1', 'v2')), {})).issues[0]?.path,
    ).toBe('format');
    expect(
      failure(() =>
        loadBotConfig(write('format: packbot.config/v1\napi:\n  base_url: embedded\naccounts: []\n'), {}),
      ).message,
    ).toMatch(/at least one account/);
    const dup = failure(() =>
      loadBotConfig(write(`${base('embedded')}  - name: main\n    strategy: strategies/missing.yaml\n`), {}),
    );
    expect(dup.issues.map((i) => i.path).sort()).toEqual(['accounts[1].name', 'accounts[1].strategy']);
    expect(
      failure(() => loadBotConfig(write(`${base('embedded')}sim:\n  world: nope.yaml\n`), {})).issues[0],
    ).toMatchObject({ path: 'sim.world', line: 8 });
    expect(failure(() => loadBotConfig(join(dir, 'absent.yaml'), {})).message).toMatch(/file not found/);
  });

  it('rejects a control token that is too short', () => {
    const err = failure(() =>
      loadBotConfig(write(`${base('embedded')}control:\n  token_env: T\n`), { T: 'short' }),
    );
    expect(err.issues[0]?.path).toBe('control.token_env');
    expect(err.message).not.toContain('short\n');
  });

  it('resolves named control tokens, secret and hidden like the single one', () => {
    const yaml = `${base('embedded')}control:\n  token_env: T\n  tokens:\n    - { name: alice, token_env: TA }\n    - { name: bob, token_env: TB }\n`;
    const cfg = loadBotConfig(write(yaml), { T: 'tok_0123456789abcdef', TA: 'alice_0123456789abc' });
    expect(cfg.control.tokens().map((t) => t.name)).toEqual(['control', 'alice']);
    expect(JSON.stringify({ ...cfg.control })).not.toContain('alice_0123456789abc');
    expect(cfg.secrets()).toContain('alice_0123456789abc');
    const err = failure(() =>
      loadBotConfig(
        write(`${base('embedded')}control:\n  tokens:\n    - { name: control, token_env: TA }\n`),
        {
          TA: 'short',
        },
      ),
    );
    expect(err.issues.map((i) => i.path)).toEqual(['control.tokens[0].name', 'control.tokens[0].token_env']);
  });

  it('the shipped config/bot.yaml is valid against the schema and points at the schema file', () => {
    const text = readFileSync('config/bot.yaml', 'utf8');
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=../schemas/bot-config.schema.json');
    const parsed = validateSource(parseSource(text, 'config/bot.yaml'), BotConfigFile);
    expect(parsed.api.base_url).toBe('embedded');
    expect(parsed.accounts[0]?.strategy).toBe('../strategies/balanced.yaml');
  });
});

describe('loadBotConfig validates what the config references, before anything runs', () => {
  it("keeps each account's validated, frozen strategy and the embedded world on the config", () => {
    const cfg = loadBotConfig(write(`${base('embedded')}sim:\n  world: world.yaml\n`), {});
    expect(cfg.accounts[0]?.strategy.name).toBe('s');
    expect(cfg.accounts[0]?.strategy.sell.list.markup).toBe(1.5);
    expect(Object.isFrozen(cfg.accounts[0]?.strategy.sell)).toBe(true);
    expect(cfg.sim.world?.format).toBe('packbot.world/v1');
  });

  it("collects every issue: the config's own and each referenced file's, with their positions", () => {
    writeFileSync(
      join(dir, 'strategies', 'bad.yaml'),
      'format: packbot.strategy/v1\nsell:\n  list:\n    markup: 3\n',
    );
    writeFileSync(join(dir, 'world.yaml'), 'format: packbot.world/v1\nname: 7\n');
    const err = failure(() =>
      loadBotConfig(
        write(
          'format: packbot.config/v1\napi:\n  base_url: embedded\naccounts:\n  - name: main\n    strategy: strategies/bad.yaml\n  - name: main\n    strategy: strategies/s.yaml\nsim:\n  world: world.yaml\n',
        ),
        {},
      ),
    );
    const where = err.issues.map((i) => `${i.file}:${i.line}:${i.path}`);
    expect(where).toContain(`${join(dir, 'bot.yaml')}:7:accounts[1].name`);
    expect(where).toContain(`${join(dir, 'strategies', 'bad.yaml')}:4:sell.list.markup`);
    expect(where).toContain(`${join(dir, 'world.yaml')}:2:name`);
  });

  it('does not load the world of a config that is not embedded', () => {
    writeFileSync(join(dir, 'world.yaml'), 'x: 1\n');
    const cfg = loadBotConfig(write(`${base('http://127.0.0.1:8787')}sim:\n  world: world.yaml\n`), {
      PARTNER_API_KEY: 'k',
    });
    expect(cfg.sim.world).toBeUndefined();
  });
});

describe('dry-run keeps its own books', () => {
  it.each([
    [{}, 'data/packbot.db', 'data/packbot.db'],
    [{ forceDryRun: true }, 'data/packbot.db', 'data/packbot.dry-run.db'],
    [{ forceDryRun: true }, 'ledger', 'ledger.dry-run'],
    [{ forceDryRun: true }, '/srv/bot/x.db', '/srv/bot/x.dry-run.db'],
  ])('%o with store.path %s → %s beside the config', (options, path, expected) => {
    const cfg = loadBotConfig(write(`${base('embedded')}store:\n  path: '${path}'\n`), {}, options);
    expect(cfg.store.path).toBe(resolve(dir, expected));
  });

  it(':memory: stays in memory, dry-run too', () => {
    const cfg = loadBotConfig(
      write(`${base('embedded')}store:\n  path: ':memory:'\n`),
      {},
      { forceDryRun: true },
    );
    expect(cfg.store.path).toBe(':memory:');
  });

  it('a remote URL without mode: live is dry-run, on the paper ledger', () => {
    const cfg = loadBotConfig(write(base('https://api.example.com')), { PARTNER_API_KEY: 'k' });
    expect(cfg.store.path).toBe(join(dir, 'data/packbot.dry-run.db'));
  });
});

describe('shipped config/bot.yaml', () => {
  it('loads with the embedded simulator, the dev key and existing strategy and world files', () => {
    const cfg = loadBotConfig('config/bot.yaml', {});
    expect(cfg.mode).toBe('live');
    expect(cfg.api.embedded).toBe(true);
    expect(cfg.accounts.map((a) => [a.name, a.apiKey()])).toEqual([['main', EMBEDDED_DEV_KEY]]);
    expect(cfg.sim.worldPath).toBe(resolve('config/sim.yaml'));
    // `npm start` (run from the repository) keeps its books in the repository's data/, as the
    // README says, now that `../data` is relative to config/.
    expect(cfg.store.path).toBe(resolve('data/packbot.db'));
    expect(cfg.control.killSwitchFile).toBe(resolve('data/packbot.pause'));
    expect(cfg.control.token()).toBeUndefined();
  });
});
