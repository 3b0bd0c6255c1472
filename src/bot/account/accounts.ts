/**
 * The runner's accounts: per account the HTTP client, the key's identity and scopes checked
 * against its strategy (exit 2 before any order), the API (the paper market in dry-run) and the
 * account bot.
 */
import { createHttpClient, type HttpPartnerApi } from '../../api/client.js';
import type { PartnerApi } from '../../api/partner-api.js';
import type { BotConfig } from '../../config/bot-config.js';
import { clientOptions } from '../../config/client-options.js';
import type { Clock } from '../../core/clock.js';
import { UserInputError } from '../../core/errors.js';
import type { KillSwitch } from '../../obs/kill-switch.js';
import type { Logger } from '../../obs/logger.js';
import type { Metrics } from '../../obs/metrics.js';
import type { Notifier } from '../../obs/notify/event.js';
import type { Ledger } from '../../store/ledger.js';
import { missingScopes, type ScopeNeeds, scopesNeeded } from '../../strategy/scopes.js';
import { SharedCatalog } from '../buying/catalog.js';
import { stopOnFatal } from '../common/fatal-guard.js';
import type { CrashPoint } from '../spending/executor.js';
import { AccountBot, type Cadence } from './account-bot.js';

/** The most between two accounts' first looks: 100 accounts start within 20 s. */
const STAGGER_MS = 200;

/**
 * The spread between two accounts' looks: STAGGER_MS, less when the pool cadence is short, so the
 * whole spread stays within a quarter of it (0 for one account).
 */
function staggerStep(accounts: number, poolsMs: number): number {
  return accounts <= 1 ? 0 : Math.min(STAGGER_MS, Math.floor(poolsMs / (4 * accounts)));
}

/** What tests may change in every account bot (part of RunnerOptions). */
export interface AccountOverrides {
  /** Override of the sell sweep and idle cadence (tests). */
  cadence?: Partial<Cadence>;
  crashAt?: (point: CrashPoint, key: string) => void;
  stopwatch?: () => number;
}

/**
 * Before any order (and before recovery settles one in doubt): the key acts on a linked account and has
 * every scope the strategy needs in this mode (`scopesNeeded`), so a missing scope stops the bot
 * now instead of at its first 403.
 */
async function checkIdentity(
  api: PartnerApi,
  account: string,
  needs: ScopeNeeds,
  log: Logger,
): Promise<readonly string[]> {
  const me = await api.getIdentity();
  if (!me.linked)
    throw new UserInputError(`account '${account}': the API key is not linked to a user account (GET /me)`);
  const missing = missingScopes(me.key.scopes, needs);
  if (missing.required.length > 0)
    throw new UserInputError(
      `account '${account}': the API key '${me.key.name}' lacks the scope(s) ${missing.required.join(', ')} that its strategy needs (GET /me lists ${me.key.scopes.join(', ') || 'none'})`,
    );
  if (missing.optional.length > 0)
    log.warn(
      { account, key_name: me.key.name, missing: missing.optional },
      'API key lacks read:pulls: orders in doubt cannot be checked against the purchase report',
    );
  return me.key.scopes;
}

export interface AccountsEnv {
  baseUrl: string;
  clock: Clock;
  ledger: Ledger;
  log: Logger;
  metrics: Metrics;
  killSwitch: KillSwitch;
  /** Whether the last API answer came back (for /readyz). */
  health: { lastApiOk: boolean };
  cleanups: (() => Promise<void> | void)[];
  notifier: Notifier;
  fail: (e: unknown) => void;
}

/**
 * Per account: the HTTP client, the key's identity and scopes checked against its strategy (exit 2
 * before any order), the API (the paper market in dry-run), and the account bot. A fatal answer
 * stops the runner once `arm()` is called (during start-up it fails the start itself).
 */
export async function buildAccounts(config: BotConfig, options: AccountOverrides, env: AccountsEnv) {
  const { clock, ledger, log, metrics, killSwitch, health } = env;
  const cadence: Cadence = {
    accountMs: config.polling.accountMs,
    poolsMs: config.polling.poolsMs,
    vaultMs: config.polling.vaultMs,
    listingsMs: config.polling.listingsMs,
    sweepMs: Math.min(15_000, Math.floor(config.sellback.safetyMarginMs / 2)),
    idleMs: 5_000,
    ...options.cadence,
  };
  const bots: AccountBot[] = [];
  const apis: PartnerApi[] = [];
  const https: HttpPartnerApi[] = [];
  const scopesOf = new Map<string, readonly string[]>();
  let armed = false;
  // Pools and pack lists are read once for every account; first looks are spread (STAGGER_MS).
  const catalog = new SharedCatalog(() => clock.now());
  const stagger = staggerStep(config.accounts.length, cadence.poolsMs);
  for (const [i, account] of config.accounts.entries()) {
    const { strategy } = account;
    const http = createHttpClient({
      ...clientOptions(config, account, clock, env.baseUrl),
      onResponse: (e) => {
        metrics.apiRequest(e.endpoint, e.status, e.durationMs / 1000);
        health.lastApiOk = e.status !== 'transport' && e.status < 500;
      },
    });
    https.push(http);
    env.cleanups.push(() => http.close());
    const scopes = await checkIdentity(http, account.name, scopesNeeded(strategy, config.mode), log);
    scopesOf.set(account.name, scopes);
    const api: PartnerApi =
      config.mode === 'dry-run'
        ? // Loaded in dry-run only: a live bot never loads the simulator the paper market is.
          await (await import('../buying/paper-market.js')).createPaperMarket(http, strategy, clock, {
            seed: config.sim.seed,
          })
        : http;
    apis.push(api);
    const alog = log.child({ account: account.name });
    bots.push(
      new AccountBot({
        account: account.name,
        api: stopOnFatal(api, (e) => (armed ? env.fail(e) : undefined)),
        ledger,
        clock,
        log: alog,
        // Its account-scoped series carry `account`: several accounts never overwrite each other.
        metrics: metrics.forAccount(account.name),
        strategy,
        cadence,
        shopMs: config.polling.shopMs,
        batchSize: config.sellback.batchSize,
        evidence: config.orders,
        adoptUnknownCards: config.orders.adoptUnknownCards,
        // Without the scope a report read is a 403, which stops the runner: never ask.
        readsPurchaseReport: scopes.includes('read:pulls'),
        killSwitch,
        notifier: env.notifier,
        onFatal: env.fail,
        catalog,
        staggerMs: i * stagger,
        ...(options.crashAt ? { crashAt: options.crashAt } : {}),
        ...(options.stopwatch ? { stopwatch: options.stopwatch } : {}),
      }),
    );
    alog.info({ strategy: strategy.name, key_env: account.keyEnv }, 'account ready');
  }
  return {
    bots,
    apis,
    https,
    scopes: scopesOf,
    arm: () => {
      armed = true;
    },
  };
}
