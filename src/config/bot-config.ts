/**
 * The bot's configuration file (`packbot.config/v1`): validated once at start-up, frozen, and
 * resolved against the environment (API keys) and the file system (strategy and world paths).
 *
 * Mode rule (the only way to spend real money is to ask for it by name):
 * - `api.base_url: embedded` or a loopback URL (localhost, 127.0.0.0/8, ::1): `mode` defaults to `live`
 *   (it is a simulator: nothing real is at stake).
 * - any other URL: `mode` defaults to `dry-run`; live trading needs `mode: live` written in the file.
 * API keys are read from the variables the file names, never from the file itself (webhook URLs,
 * which may carry tokens, are best given the same way: src/config/notify-config.ts). They are exposed
 * only through a non-enumerable `apiKey()` closure, so logging or serialising the config leaks nothing.
 *
 * Path rule: every relative path in the file (`accounts[].strategy`, `store.path`, `sim.world`,
 * `control.kill_switch_file`) is relative to the directory of the config file, as in a compose
 * file; absolute paths are taken as written. One rule, so `packbot status --config /etc/x/bot.yaml`
 * finds the ledger the bot wrote whatever directory either was started from (`configPathOf`).
 */

import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { MAX_SELLBACK_ITEMS } from '../api/rules.js';
import { formatPath } from '../core/format-path.js';
import { deepFreeze } from '../core/freeze.js';
import type { World } from '../market/world-schema.js';
import type { Strategy } from '../strategy/strategy-schema.js';
import { InputFileError, type InputIssue, readSource, validateSource } from './load.js';
import { type NotifyConfig, NotifyFile, resolveNotify, urlSecrets } from './notify-config.js';
import { loadStrategy } from './strategy-file.js';
import { DEFAULT_WORLD_PATH, loadWorld } from './world-file.js';

export const BOT_CONFIG_FORMAT = 'packbot.config/v1';
/** The simulator's full-scope development key (config/sim.yaml); used only against `embedded`. */
export const EMBEDDED_DEV_KEY = 'sk_sim_full';
const DEFAULT_KEY_ENV = 'PARTNER_API_KEY';

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const Seconds = (min: number, max: number) => z.number().int().min(min).max(max);
const RelPath = z.string().min(1, 'must not be empty');
/** The wording every path field's JSON Schema description ends with (editors show it). */
const PATH_RULE = 'relative to the directory of this config file, or absolute';
const HostName = z
  .string()
  .regex(
    /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/,
    'must be a host name (no port, no scheme)',
  )
  .max(253);

const BaseUrl = z.union([
  z.literal('embedded'),
  z
    .url({ protocol: /^https?$/, error: "must be 'embedded' or an http(s) URL" })
    .refine((u) => !new URL(u).username && !new URL(u).password, 'must not carry credentials'),
]);

export const BotConfigFile = z.strictObject({
  format: z.literal(BOT_CONFIG_FORMAT, { error: `must be '${BOT_CONFIG_FORMAT}'` }),
  mode: z.enum(['live', 'dry-run']).optional(),
  api: z.strictObject({
    base_url: BaseUrl,
    key_env: EnvName.default(DEFAULT_KEY_ENV),
    timeout_seconds: Seconds(1, 300).default(30),
    allow_insecure_http: z
      .boolean()
      .default(false)
      .describe(
        'accept an http: base_url beyond loopback (the key crosses the network in cleartext; warned at every start)',
      ),
    max_response_mb: z
      .number()
      .positive()
      .max(1024)
      .default(32)
      .describe('largest API answer read, in MiB; a larger one is refused (RESPONSE_TOO_LARGE)'),
  }),
  accounts: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'must be 1-32 characters of a-z 0-9 _ -'),
        key_env: EnvName.optional(),
        strategy: RelPath.describe(`strategy file, ${PATH_RULE}`),
      }),
    )
    .min(1, 'at least one account is required'),
  store: z
    .strictObject({
      path: RelPath.default('data/packbot.db').describe(
        `SQLite ledger, ${PATH_RULE}; ':memory:' keeps it in memory (dry-run: X.db → X.dry-run.db beside it)`,
      ),
    })
    .default({ path: 'data/packbot.db' }),
  metrics: z
    .strictObject({
      enabled: z.boolean().default(true),
      host: z.string().min(1).default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(9464),
      allowed_hosts: z
        .array(HostName)
        .default([])
        .describe(
          'names the server answers to besides localhost, 127.0.0.1, [::1], the listen address and IP literals (others: 421)',
        ),
      token_env: EnvName.optional().describe(
        'variable holding a bearer token (16+ characters) that /metrics then needs',
      ),
    })
    .default({ enabled: true, host: '127.0.0.1', port: 9464, allowed_hosts: [] }),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      pretty: z.enum(['auto', 'always', 'never']).default('auto'),
    })
    .default({ level: 'info', pretty: 'auto' }),
  polling: z
    .strictObject({
      account_seconds: Seconds(5, 3600).default(60),
      pools_seconds: Seconds(60, 86_400).default(300),
      vault_seconds: Seconds(60, 86_400).default(600),
      listings_seconds: Seconds(30, 86_400).default(300),
      shop_seconds: Seconds(300, 86_400)
        .default(900)
        .describe('full shop sync for card buying (strategy cards); the spec allows a few an hour'),
    })
    .default({
      account_seconds: 60,
      pools_seconds: 300,
      vault_seconds: 600,
      listings_seconds: 300,
      shop_seconds: 900,
    }),
  sellback: z
    .strictObject({
      safety_margin_seconds: Seconds(5, 290).default(60),
      batch_size: z.number().int().min(1).max(MAX_SELLBACK_ITEMS).default(MAX_SELLBACK_ITEMS),
    })
    .default({ safety_margin_seconds: 60, batch_size: MAX_SELLBACK_ITEMS }),
  // Orders in doubt (docs/runner.md): settled by evidence, never re-sent blind; inside the horizon a
  // card order whose card is in the vault is re-sent for its exact price.
  orders: z
    .strictObject({
      settle_seconds: Seconds(1, 3600)
        .optional()
        .describe(
          'after the last send, how long an order may still run on the service (default: api.timeout_seconds)',
        ),
      clock_skew_seconds: Seconds(0, 3600).default(60),
      resend_horizon_seconds: Seconds(0, 7 * 86_400).default(3600),
      adopt_unknown_cards: z
        .boolean()
        .default(false)
        .describe('trade vault cards opened outside the bot (by the owner in the app) as if they were pulls'),
    })
    .default({ clock_skew_seconds: 60, resend_horizon_seconds: 3600, adopt_unknown_cards: false }),
  sim: z
    .strictObject({
      world: RelPath.optional().describe(`world file of the embedded simulator, ${PATH_RULE}`),
      seed: z
        .number()
        .int()
        .min(0)
        .max(2 ** 32 - 1)
        .default(1),
      speed: z.number().min(1).max(10_000).default(1),
    })
    .default({ seed: 1, speed: 1 }),
  control: z
    .strictObject({
      kill_switch_file: RelPath.default('data/packbot.pause').describe(
        `while this file exists no pack is opened; ${PATH_RULE}`,
      ),
      token_env: EnvName.optional(),
      tokens: z
        .array(
          z.strictObject({
            name: z
              .string()
              .regex(/^[a-z0-9_-]{1,32}$/, 'a-z 0-9 _ -, at most 32 characters')
              .describe('who acts with this token (logs, ledger)'),
            token_env: EnvName,
          }),
        )
        .optional()
        .describe('named control tokens (token_env acts as `control`); an unset variable disables its token'),
    })
    .default({ kill_switch_file: 'data/packbot.pause' }),
  notify: NotifyFile.optional().describe('webhooks the bot posts events to (docs/operations.md)'),
});
export type BotConfigFile = z.infer<typeof BotConfigFile>;

export interface AccountConfig {
  readonly name: string;
  /** Name of the environment variable holding this account's key (safe to log). */
  readonly keyEnv: string;
  /** Absolute path of the strategy file. */
  readonly strategyPath: string;
  /** The strategy, validated and frozen when the config was loaded (nothing loads it later). */
  readonly strategy: Strategy;
  /** The API key. Non-enumerable: never serialised with the config. */
  readonly apiKey: () => string;
}

export interface BotConfig {
  readonly file: string;
  readonly mode: 'live' | 'dry-run';
  /** Why `mode` is what it is (for the start-up log line). */
  readonly modeReason: string;
  readonly api: {
    readonly baseUrl: string | 'embedded';
    readonly embedded: boolean;
    readonly loopback: boolean;
    readonly timeoutMs: number;
    /** `api.allow_insecure_http` given for an http: URL beyond loopback (warned at every start). */
    readonly insecureHttp: boolean;
    /** `api.max_response_mb` in bytes: the client refuses a larger answer. */
    readonly maxResponseBytes: number;
  };
  readonly accounts: readonly AccountConfig[];
  /** The ledger: in dry-run mode the paper ledger beside the live one (`dryRunStorePath`). */
  readonly store: { readonly path: string };
  readonly metrics: {
    readonly enabled: boolean;
    readonly host: string;
    readonly port: number;
    /** `metrics.allowed_hosts`: Host names answered besides loopback names, the listen address and IPs. */
    readonly allowedHosts: readonly string[];
    readonly tokenEnv: string | undefined;
    /** The bearer token `/metrics` needs, or undefined (open). Non-enumerable. */
    readonly token: () => string | undefined;
  };
  readonly log: {
    readonly level: BotConfigFile['log']['level'];
    readonly pretty: 'auto' | 'always' | 'never';
  };
  readonly polling: {
    readonly accountMs: number;
    readonly poolsMs: number;
    readonly vaultMs: number;
    readonly listingsMs: number;
    readonly shopMs: number;
  };
  readonly sellback: { readonly safetyMarginMs: number; readonly batchSize: number };
  /** How orders in doubt are judged (src/bot/doubt/evidence.ts). */
  readonly orders: {
    readonly settleMs: number;
    readonly skewMs: number;
    readonly resendHorizonMs: number;
    readonly adoptUnknownCards: boolean;
  };
  readonly sim: {
    readonly worldPath: string | undefined;
    /** Embedded mode: the world, validated when the config was loaded; otherwise undefined. */
    readonly world: World | undefined;
    readonly seed: number;
    readonly speed: number;
  };
  readonly control: {
    readonly killSwitchFile: string;
    readonly tokenEnv: string | undefined;
    /** The control token, or undefined (control endpoints disabled). Non-enumerable. */
    readonly token: () => string | undefined;
    /**
     * Every usable control token with the name it acts under: `token_env`'s as `control`, then
     * each of `tokens` whose variable is set. Non-enumerable.
     */
    readonly tokens: () => readonly { name: string; token: string }[];
  };
  /** Webhooks for events; undefined when not configured or disabled (notifications are a no-op). */
  readonly notify: NotifyConfig | undefined;
  /** Every secret value (keys, token) to register with the logger's masking guard. Non-enumerable. */
  readonly secrets: () => string[];
}

function isLoopbackUrl(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname);
}

/** localhost, ::1 or 127.0.0.0/8 (a listen address like `0.0.0.0` or `::` is not). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function hidden<T extends object, K extends string, V>(obj: T, key: K, value: V): T & Record<K, V> {
  Object.defineProperty(obj, key, { value, enumerable: false, writable: false, configurable: false });
  return obj as T & Record<K, V>;
}

export interface LoadOptions {
  /** `--dry-run` on the command line: forces dry-run whatever the file says. */
  forceDryRun?: boolean;
  /**
   * `packbot validate`: check the files but not the environment (key and token variables are the
   * running bot's business, and validation must not depend on the shell it runs in).
   */
  ignoreEnv?: boolean;
}

/**
 * Reads, validates and resolves a bot config, and validates every file it references (each
 * account's strategy; the world in embedded mode), so nothing runs on a config that would fail
 * later. Every problem, including a missing key variable, is an InputFileError naming
 * file:line:column and the field (a referenced file's problems name that file); key values never
 * appear.
 */
export function loadBotConfig(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  options: LoadOptions = {},
): BotConfig {
  const src = readSource(path);
  const raw = validateSource(src, BotConfigFile);
  const issues: InputIssue[] = [];
  const issue = (at: PropertyKey[], message: string) => {
    const pos = src.locate(at);
    issues.push({ file: path, line: pos?.line, column: pos?.column, path: formatPath(at), message });
  };
  // A referenced file's own issues (with its own positions) join this file's.
  const collect = <T>(load: () => T): T | undefined => {
    try {
      return load();
    } catch (e) {
      if (!(e instanceof InputFileError)) throw e;
      issues.push(...e.issues);
      return undefined;
    }
  };
  const embedded = raw.api.base_url === 'embedded';
  const loopback = embedded || isLoopbackUrl(raw.api.base_url);

  // The key goes out with every request: beyond loopback only inside TLS, unless the operator
  // writes down that they accept cleartext.
  const cleartext = !loopback && new URL(raw.api.base_url).protocol === 'http:';
  if (cleartext && !raw.api.allow_insecure_http)
    issue(
      ['api', 'base_url'],
      'must be https: beyond loopback (the API key would cross the network in cleartext); set api.allow_insecure_http: true to accept that',
    );

  let mode: 'live' | 'dry-run';
  let modeReason: string;
  if (options.forceDryRun) [mode, modeReason] = ['dry-run', '--dry-run given'];
  else if (raw.mode) [mode, modeReason] = [raw.mode, 'set in the config file'];
  else if (loopback)
    [mode, modeReason] = ['live', embedded ? 'embedded simulator' : 'loopback URL (a local simulator)'];
  else [mode, modeReason] = ['dry-run', "remote URL without an explicit 'mode: live'"];

  const names = new Set<string>();
  const accounts = raw.accounts.map((a, i): AccountConfig => {
    if (names.has(a.name)) issue(['accounts', i, 'name'], `duplicate account name '${a.name}'`);
    names.add(a.name);
    const keyEnv = a.key_env ?? raw.api.key_env;
    const value = env[keyEnv];
    let key: string;
    if (value !== undefined && value.trim() !== '') key = value.trim();
    else if (embedded) key = EMBEDDED_DEV_KEY;
    else if (options.ignoreEnv) key = '';
    else {
      key = '';
      issue(
        a.key_env ? ['accounts', i, 'key_env'] : ['api', 'key_env'],
        `environment variable ${keyEnv} is not set (the API key of account '${a.name}')`,
      );
    }
    const strategyPath = configPathOf(path, a.strategy);
    let strategy: Strategy | undefined;
    if (!isFile(strategyPath)) issue(['accounts', i, 'strategy'], `strategy file not found: ${strategyPath}`);
    else strategy = collect(() => loadStrategy(strategyPath));
    return hidden(
      { name: a.name, keyEnv, strategyPath, strategy: strategy as Strategy },
      'apiKey',
      () => key,
    );
  });
  const keys = accounts.map((a) => a.keyEnv);
  if (new Set(keys).size !== keys.length && !embedded)
    issue(['accounts'], 'two accounts use the same key variable (one key acts on one account)');

  const worldPath = raw.sim.world ? configPathOf(path, raw.sim.world) : undefined;
  let world: World | undefined;
  if (embedded && worldPath && !isFile(worldPath))
    issue(['sim', 'world'], `world file not found: ${worldPath}`);
  else if (embedded) world = collect(() => loadWorld(worldPath ?? DEFAULT_WORLD_PATH));

  const tokenEnv = raw.control.token_env;
  const tokenValue = tokenEnv ? env[tokenEnv]?.trim() || undefined : undefined;
  if (tokenEnv && tokenValue !== undefined && tokenValue.length < 16)
    issue(['control', 'token_env'], `the token in ${tokenEnv} is too short (at least 16 characters)`);
  const named: { name: string; token: string }[] = tokenValue ? [{ name: 'control', token: tokenValue }] : [];
  for (const [i, t] of (raw.control.tokens ?? []).entries()) {
    if (t.name === 'control' || (raw.control.tokens ?? []).findIndex((o) => o.name === t.name) !== i)
      issue(['control', 'tokens', i, 'name'], `the name '${t.name}' is taken (control is token_env's)`);
    const value = env[t.token_env]?.trim() || undefined;
    if (value !== undefined && value.length < 16)
      issue(
        ['control', 'tokens', i, 'token_env'],
        `the token in ${t.token_env} is too short (at least 16 characters)`,
      );
    else if (value !== undefined) named.push({ name: t.name, token: value });
  }
  const metricsTokenEnv = raw.metrics.token_env;
  const metricsToken = metricsTokenEnv ? env[metricsTokenEnv]?.trim() || undefined : undefined;
  // Unset is an error, not "open": the operator asked for /metrics to be protected.
  if (metricsTokenEnv && metricsToken === undefined && !options.ignoreEnv)
    issue(
      ['metrics', 'token_env'],
      `environment variable ${metricsTokenEnv} is not set (the /metrics token)`,
    );
  else if (metricsTokenEnv && metricsToken !== undefined && metricsToken.length < 16)
    issue(['metrics', 'token_env'], `the token in ${metricsTokenEnv} is too short (at least 16 characters)`);
  const notify = resolveNotify(raw.notify, env, issue, options.ignoreEnv);
  if (issues.length > 0) throw new InputFileError(issues);

  const control = hidden(
    hidden(
      { killSwitchFile: configPathOf(path, raw.control.kill_switch_file), tokenEnv },
      'token',
      () => tokenValue,
    ),
    'tokens',
    () => named,
  );
  const config = {
    file: path,
    mode,
    modeReason,
    api: {
      baseUrl: raw.api.base_url,
      embedded,
      loopback,
      timeoutMs: raw.api.timeout_seconds * 1000,
      insecureHttp: cleartext,
      maxResponseBytes: Math.round(raw.api.max_response_mb * 1024 * 1024),
    },
    accounts,
    store: { path: storePathOf(raw, path, mode) },
    metrics: hidden(
      {
        enabled: raw.metrics.enabled,
        host: raw.metrics.host,
        port: raw.metrics.port,
        allowedHosts: raw.metrics.allowed_hosts,
        tokenEnv: metricsTokenEnv,
      },
      'token',
      () => metricsToken,
    ),
    log: { ...raw.log },
    polling: {
      accountMs: raw.polling.account_seconds * 1000,
      poolsMs: raw.polling.pools_seconds * 1000,
      vaultMs: raw.polling.vault_seconds * 1000,
      listingsMs: raw.polling.listings_seconds * 1000,
      shopMs: raw.polling.shop_seconds * 1000,
    },
    sellback: {
      safetyMarginMs: raw.sellback.safety_margin_seconds * 1000,
      batchSize: raw.sellback.batch_size,
    },
    orders: {
      // The service may still run an order after our request timed out: never judge it before this.
      settleMs: (raw.orders.settle_seconds ?? Math.max(60, 2 * raw.api.timeout_seconds)) * 1000,
      skewMs: raw.orders.clock_skew_seconds * 1000,
      resendHorizonMs: raw.orders.resend_horizon_seconds * 1000,
      adoptUnknownCards: raw.orders.adopt_unknown_cards,
    },
    sim: { worldPath, world, seed: raw.sim.seed, speed: raw.sim.speed },
    control,
    notify,
  };
  const secrets = () =>
    [
      ...accounts.map((a) => a.apiKey()),
      ...named.map((t) => t.token),
      ...(metricsToken ? [metricsToken] : []),
      ...(notify?.webhooks.flatMap((w) => urlSecrets(w.url())) ?? []),
    ].filter((s) => s !== '');
  return deepFreeze(hidden(config, 'secrets', secrets)) as BotConfig;
}

/**
 * A path written in the config file `configFile`, made absolute by the path rule (header): against
 * the file's directory, never the working directory, which differs between the bot and the
 * commands that read its ledger. `configFile` itself, as given on the command line, is relative
 * to the working directory.
 */
export function configPathOf(configFile: string, written: string): string {
  return resolve(dirname(resolve(configFile)), written);
}

/**
 * The ledger path of a validated file read from `configFile` (the report command needs only this).
 * Dry-run keeps its paper trades in its own ledger beside the live one, so they never mix with
 * real books.
 */
export function storePathOf(
  raw: BotConfigFile,
  configFile: string,
  mode: 'live' | 'dry-run' = 'live',
): string {
  if (raw.store.path === ':memory:') return ':memory:';
  const live = configPathOf(configFile, raw.store.path);
  return mode === 'dry-run' ? dryRunStorePath(live) : live;
}

/** `data/packbot.db` → `data/packbot.dry-run.db` (no `.db`: `ledger` → `ledger.dry-run`). */
export function dryRunStorePath(livePath: string): string {
  return /\.db$/.test(livePath) ? livePath.replace(/\.db$/, '.dry-run.db') : `${livePath}.dry-run`;
}

function isFile(p: string): boolean {
  return existsSync(p) && statSync(p).isFile();
}
