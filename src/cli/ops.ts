/**
 * What the operator commands (`status`, `doctor`, `vault`, `listings`, `delist`) share: the
 * running bot's API at the config's metrics host and port (with the control token when one is
 * set), the Partner API with an account's key when the bot is not there to ask (in embedded mode:
 * a simulator restored from the bot's saved state, so the cards are the bot's), and tables.
 */
import { createHttpClient } from '../api/client.js';
import type { PartnerApi } from '../api/partner-api.js';
import { CATEGORIES, type VaultEntry } from '../api/schemas.js';
import { readVault } from '../bot/common/vault.js';
import { embeddedStatePath, readSavedSim, startEmbedded } from '../bot/embedded.js';
import type { AccountConfig, BotConfig } from '../config/bot-config.js';
import { clientOptions } from '../config/client-options.js';
import { type Clock, ScaledClock } from '../core/clock.js';
import { UserInputError } from '../core/errors.js';
import { textTable } from '../core/text-table.js';

/** The bot's own server, as a client on this machine reaches it. */
export function botUrl(config: BotConfig): string {
  const h = config.metrics.host;
  const host =
    h === '0.0.0.0' || h === '' ? '127.0.0.1' : h === '::' ? '[::1]' : h.includes(':') ? `[${h}]` : h;
  return `http://${host}:${config.metrics.port}`;
}

/** The first control token this shell has (token_env's, else the first named one set). */
export function controlToken(config: BotConfig): string | undefined {
  return config.control.tokens()[0]?.token;
}

function authHeaders(config: BotConfig): Record<string, string> {
  const token = controlToken(config);
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** Whether the bot answers on its server (a second at most). */
export async function botUp(config: BotConfig): Promise<boolean> {
  if (!config.metrics.enabled) return false;
  try {
    const res = await fetch(`${botUrl(config)}/healthz`, { signal: AbortSignal.timeout(1000) });
    return res.ok;
  } catch {
    return false;
  }
}

export async function botGet(config: BotConfig, path: string): Promise<unknown> {
  const res = await fetch(`${botUrl(config)}${path}`, {
    headers: authHeaders(config),
    signal: AbortSignal.timeout(5000),
  });
  // Once the bot has a control token every read needs it: say which variable to set.
  if (res.status === 401 || res.status === 403)
    throw new UserInputError(
      `GET ${path}: HTTP ${res.status}: the bot's reads need its control token; set ${config.control.tokenEnv ?? 'the variable control.token_env names'} in this shell (docs/security.md)`,
    );
  if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status} ${(await res.text()).trim()}`);
  return res.json();
}

export async function botPost(
  config: BotConfig,
  path: string,
  body: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${botUrl(config)}${path}`, {
    method: 'POST',
    headers: { ...authHeaders(config), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // kept as text
  }
  return { status: res.status, body: parsed };
}

export interface Partner {
  api: PartnerApi;
  /** Where the API is (the URL, or `embedded (restored from F)`). */
  source: string;
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * The Partner API for `account`. Embedded mode: a simulator started here from the bot's saved
 * state (the bot must not be running when `write` is set: the caller holds the writer lock; the
 * state file is then written after every change, as the bot does).
 */
export async function openPartner(
  config: BotConfig,
  account: AccountConfig,
  options: { write?: boolean } = {},
): Promise<Partner> {
  if (!config.api.embedded) {
    const api = createHttpClient(clientOptions(config, account, wallClock()));
    return { api, source: config.api.baseUrl, baseUrl: config.api.baseUrl, close: () => api.close() };
  }
  const world = config.sim.world;
  if (!world) throw new Error('embedded mode without a validated world');
  const statePath = config.store.path === ':memory:' ? undefined : embeddedStatePath(config.store.path);
  const saved = statePath ? readSavedSim(statePath, world, config.sim.seed) : undefined;
  if (options.write && !saved?.ok)
    throw new UserInputError(
      `${config.file}: the embedded simulator's state ${statePath ?? ''} cannot be restored (${saved && !saved.ok ? saved.reason : 'in-memory ledger'}): start the bot instead`,
    );
  // From where the bot left it: jumping to the wall clock would first simulate the whole gap
  // (weeks of other buyers after a long stop); the bot itself does that at its next start.
  const clock = saved?.ok ? new ScaledClock(saved.header.savedAt + 1, 1) : wallClock();
  const embedded = await startEmbedded(clock, {
    world,
    seed: saved?.ok ? saved.header.seed : config.sim.seed,
    configSeed: config.sim.seed,
    ...(saved?.ok ? { restore: saved.buf } : {}),
    ...(options.write && statePath ? { statePath } : {}),
  });
  const api = createHttpClient(clientOptions(config, account, clock, embedded.server.url));
  return {
    api,
    source: saved?.ok ? `embedded (restored from ${statePath})` : 'embedded (fresh: no saved state)',
    baseUrl: embedded.server.url,
    close: async () => {
      await api.close();
      await embedded.server.close();
    },
  };
}

function wallClock(): Clock {
  return new ScaledClock(Date.now(), 1);
}

/** Every card in the account's vault, all categories. */
export function wholeVault(api: PartnerApi): Promise<Map<string, VaultEntry>> {
  return readVault(api, CATEGORIES);
}

/** A plain text table; numeric-looking columns right-aligned. */
export function table(head: string[], rows: string[][]): string {
  const right = head.map(
    (_, i) => rows.length > 0 && rows.every((r) => /^-?[$\d][\d,.$ %-]*$|^-$/.test(r[i] ?? '')),
  );
  return textTable(head, rows, { right, rule: true }).join('\n');
}
