/**
 * The bot's lifecycle: takes the ledger's writer lock first, then builds everything from a
 * validated BotConfig (logger with the keys registered as secrets, metrics, notifications, ledger,
 * kill switch, the API per account after its identity and scope check, the metrics server),
 * recovers from the ledger, runs the account bots, and stops gracefully: no new orders, orders in
 * flight finished, pulls still in their window sold, ledger closed. The embedded simulator's
 * resumption is embedded-resume.ts; building the accounts (identity and scope check, API, bot) is
 * accounts.ts.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { HttpPartnerApi } from '../api/client.js';
import type { PartnerApi } from '../api/partner-api.js';
import { type BotConfig, isLoopbackHost, loadBotConfig } from '../config/bot-config.js';
import { type Clock, ScaledClock, WallClock } from '../core/clock.js';
import type { BotControl, BotView } from '../obs/bot-view.js';
import { endpointPauseFile, KillSwitch } from '../obs/kill-switch.js';
import { createLogger, type Logger, SecretRegistry } from '../obs/logger.js';
import { Metrics } from '../obs/metrics.js';
import type { Notifier } from '../obs/notify/event.js';
import { createNotifier } from '../obs/notify/notifier.js';
import { type ObsServer, startObsServer } from '../obs/server.js';
import { Ledger } from '../store/ledger.js';
import { doubtFigures } from '../store/order-facts.js';
import { sharedBits } from '../store/private-files.js';
import { acquireWriterLock, type WriterLock } from '../store/writer-lock.js';
import type { AccountBot } from './account/account-bot.js';
import { type AccountOverrides, buildAccounts } from './account/accounts.js';
import { ClockBox } from './common/clock-box.js';
import * as notices from './common/notices.js';
import type { Embedded } from './embedded.js';
import { RunnerControl } from './views/control.js';
import { dailySummaryLoop } from './views/daily-summary.js';
import { RunnerView } from './views/read-model.js';

export interface RunnerOptions extends AccountOverrides {
  /** Default: wall clock (sped up by `sim.speed` in embedded mode). */
  clock?: Clock;
  /** Log destination (tests collect lines); default stdout. */
  logDestination?: NodeJS.WritableStream;
  /** Serve /metrics etc. (default: config.metrics.enabled); port 0 in tests. */
  metricsPort?: number;
  /** Instead of the webhooks of `config.notify` (tests). */
  notifier?: Notifier;
}

/** What a running bot is made of, built by `Runner.start` (and undone by `stop`). */
interface RunnerParts {
  config: BotConfig;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  ledger: Ledger;
  killSwitch: KillSwitch;
  bots: AccountBot[];
  apis: PartnerApi[];
  /** The HTTP clients under `apis`, closed at the end. */
  https: HttpPartnerApi[];
  embedded: Embedded | undefined;
  obs: ObsServer | undefined;
  /** The ledger's writer lock, released at the end. */
  lock: WriterLock;
  /** The operator's actions (control API, SIGHUP reload). */
  control: BotControl;
  /** What the read API shows. */
  view: BotView;
  notifier: Notifier;
}

export class Runner {
  private stopping: Promise<void> | undefined;
  private fatal: unknown;
  private resolveDone!: (code: number) => void;
  private readonly summaries = new AbortController();
  private summaryLoop: Promise<void> | undefined;
  /** Resolves with the exit code once the runner has stopped (by `stop` or a fatal error). */
  readonly done = new Promise<number>((r) => {
    this.resolveDone = r;
  });

  readonly config: BotConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly ledger: Ledger;
  readonly killSwitch: KillSwitch;
  readonly bots: AccountBot[];
  readonly apis: PartnerApi[];
  private readonly https: HttpPartnerApi[];
  readonly embedded: Embedded | undefined;
  readonly obs: ObsServer | undefined;
  private readonly lock: WriterLock;
  /** The operator's actions (control API, SIGHUP reload). */
  readonly control: BotControl;
  /** What the read API shows. */
  readonly view: BotView;
  readonly notifier: Notifier;

  private constructor(parts: RunnerParts) {
    this.config = parts.config;
    this.clock = parts.clock;
    this.log = parts.log;
    this.metrics = parts.metrics;
    this.ledger = parts.ledger;
    this.killSwitch = parts.killSwitch;
    this.bots = parts.bots;
    this.apis = parts.apis;
    this.https = parts.https;
    this.embedded = parts.embedded;
    this.obs = parts.obs;
    this.lock = parts.lock;
    this.control = parts.control;
    this.view = parts.view;
    this.notifier = parts.notifier;
  }

  static async start(config: BotConfig, options: RunnerOptions = {}): Promise<Runner> {
    // Before anything else is touched: a second bot on this ledger is refused with nothing changed.
    const lock = acquireWriterLock(config.store.path);
    try {
      return await Runner.startLocked(config, options, lock);
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  /**
   * Start-up in named steps, each undone by `cleanup` if a later one fails: logging (secrets first),
   * the ledger, the embedded simulator (when configured), the accounts (identity and scopes checked,
   * API and bot built), the metrics server; then recovery and the loops.
   */
  private static async startLocked(
    config: BotConfig,
    options: RunnerOptions,
    lock: WriterLock,
  ): Promise<Runner> {
    const clock = new ClockBox(
      options.clock ??
        (config.api.embedded && config.sim.speed > 1
          ? new ScaledClock(Date.now(), config.sim.speed)
          : new WallClock()),
    );
    const { log, secrets } = startLogging(config, clock, options.logDestination);
    log.info({ mode: config.mode, why: config.modeReason, config: config.file }, 'packbot starting');
    if (config.api.insecureHttp)
      log.warn(
        { base_url: config.api.baseUrl },
        'api.allow_insecure_http: the API key crosses the network unencrypted with every request (use https:)',
      );
    const cleanups: (() => Promise<void> | void)[] = [];
    try {
      const metrics = new Metrics();
      // Delivery never blocks trading: events are queued per webhook and sent by their own workers.
      const notifier =
        options.notifier ??
        createNotifier(config.notify, { clock, log, metrics, mask: (text) => secrets.mask(text) });
      cleanups.push(() => notifier.close());
      const ledger = Ledger.open(config.store.path, { clock, deferCheckpoints: true });
      cleanups.push(() => ledger.close());
      log.info({ path: config.store.path, ...ledger.durability() }, 'ledger open');
      const storeDir = dirname(config.store.path);
      if (config.store.path !== ':memory:' && sharedBits(storeDir) !== 0)
        log.warn(
          { dir: storeDir, mode: (statSync(storeDir).mode & 0o777).toString(8) },
          'the store directory is open to other users (its files are 0600): chmod 700 it unless it is shared on purpose',
        );

      let baseUrl = config.api.baseUrl;
      let embedded: Embedded | undefined;
      if (config.api.embedded) {
        // Loaded here only: a bot against a URL never loads the simulator.
        const { resumeEmbedded } = await import('./embedded-resume.js');
        embedded = await resumeEmbedded(config, ledger, clock, !options.clock, log);
        const started = embedded;
        cleanups.push(async () => {
          await started.server.close();
          started.save();
        });
        baseUrl = embedded.server.url;
      }

      let wasPaused = false;
      const killSwitch = new KillSwitch(
        config.control.killSwitchFile,
        () => clock.now(),
        (s) => {
          metrics.killSwitch(s);
          if (s.paused !== wasPaused)
            notifier.notify(s.paused ? notices.paused(s.reasons, clock.now()) : notices.resumed(clock.now()));
          wasPaused = s.paused;
        },
        { stateFile: endpointPauseFile(config.store.path) },
      );
      const pause = killSwitch.status();
      if (pause.paused) log.warn({ reasons: pause.reasons, file: pause.file }, 'opening packs is paused');
      for (const a of config.accounts) {
        const am = metrics.forAccount(a.name);
        exportDoubts(am, ledger, a.name);
        am.listingsActive(ledger.activeListings(a.name).length);
      }

      const health = { lastApiOk: false };
      let runner: Runner | undefined;
      const accounts = await buildAccounts(config, options, {
        baseUrl,
        clock,
        ledger,
        log,
        metrics,
        killSwitch,
        health,
        cleanups,
        notifier,
        fail: (e) => runner?.failed(e),
      });
      const view = new RunnerView({
        mode: config.mode,
        embedded: config.api.embedded,
        ledger,
        killSwitch,
        bots: accounts.bots,
        now: () => clock.now(),
      });
      const control = new RunnerControl({
        ledger,
        killSwitch,
        bots: accounts.bots,
        log,
        mode: config.mode,
        scopes: accounts.scopes,
        loadStrategies: () => {
          const fresh = loadBotConfig(config.file, process.env, { ignoreEnv: true });
          return new Map(fresh.accounts.map((a) => [a.name, a.strategy]));
        },
      });
      const obs = config.metrics.enabled
        ? await serveMetrics(config, options, {
            metrics,
            killSwitch,
            clock,
            log,
            ledger,
            health,
            view,
            control,
          })
        : undefined;
      if (obs) cleanups.push(() => obs.close());

      runner = new Runner({
        config,
        clock,
        log,
        metrics,
        ledger,
        killSwitch,
        bots: accounts.bots,
        apis: accounts.apis,
        https: accounts.https,
        embedded,
        obs,
        lock,
        control,
        view,
        notifier,
      });
      for (const bot of accounts.bots) await bot.start();
      accounts.arm();
      if (notifier.wants('daily_summary'))
        runner.summaryLoop = dailySummaryLoop({
          clock,
          ledger,
          notifier,
          accounts: config.accounts.map((a) => a.name),
          signal: runner.summaries.signal,
        }).catch((e: unknown) => log.error({ err: e }, 'daily summary loop stopped'));
      log.info({ accounts: accounts.bots.length }, 'packbot running');
      return runner;
    } catch (e) {
      for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
      throw e;
    }
  }

  private failed(e: unknown): void {
    if (this.fatal !== undefined) return;
    this.fatal = e;
    this.notifier.notify(notices.fatal(e, this.clock.now()));
    void this.stop('fatal error');
  }

  /** Graceful stop; idempotent. The exit code (0, or 1 after a fatal error) goes to `done`. */
  stop(reason = 'stop requested'): Promise<void> {
    this.stopping ??= this.shutdown(reason);
    return this.stopping;
  }

  private async shutdown(reason: string): Promise<void> {
    this.log.info({ reason }, 'stopping: no new orders; finishing orders in flight and sell-backs');
    try {
      await Promise.all(this.bots.map((b) => b.stopOpening()));
      await Promise.all(this.bots.map((b) => b.stop()));
    } catch (e) {
      this.log.error({ err: e }, 'error while stopping');
      this.fatal ??= e;
    }
    this.summaries.abort();
    await this.summaryLoop;
    for (const a of this.config.accounts) exportDoubts(this.metrics.forAccount(a.name), this.ledger, a.name);
    this.ledger.close();
    await this.obs?.close().catch(() => undefined);
    for (const h of this.https) await h.close().catch(() => undefined);
    await this.embedded?.server.close().catch(() => undefined);
    this.embedded?.save();
    this.lock.release();
    // Last: a fatal error's notification (and whatever else is queued) gets a short grace to go out.
    await this.notifier.close().catch(() => undefined);
    this.log.info({ reason }, 'stopped');
    this.resolveDone(this.fatal === undefined ? 0 : 1);
  }
}

/**
 * The doubt gauges as the ledger alone gives them (order-facts.ts): before the account bots start
 * and after they stop, when no request is on the wire.
 */
function exportDoubts(metrics: Metrics, ledger: Ledger, account: string): void {
  const f = doubtFigures(ledger.unresolvedIntents(account));
  metrics.ordersInDoubt(f.inDoubt, f.parked, f.worstCaseCents);
}

/** The logger, with every key and token registered as a secret before the first line. */
function startLogging(
  config: BotConfig,
  clock: Clock,
  destination?: NodeJS.WritableStream,
): { log: Logger; secrets: SecretRegistry } {
  const secrets = new SecretRegistry();
  secrets.add(...config.secrets());
  const log = createLogger({
    level: config.log.level,
    pretty: config.log.pretty,
    secrets,
    now: () => clock.now(),
    ...(destination ? { destination } : {}),
  });
  return { log, secrets };
}

/** /metrics, /healthz, /readyz and control; a warning when it is reachable beyond loopback without a token. */
async function serveMetrics(
  config: BotConfig,
  options: RunnerOptions,
  env: {
    metrics: Metrics;
    killSwitch: KillSwitch;
    clock: Clock;
    log: Logger;
    ledger: Ledger;
    health: { lastApiOk: boolean };
    view: BotView;
    control: BotControl;
  },
): Promise<ObsServer> {
  const { log, ledger, health } = env;
  const tokens = config.control.tokens();
  const obs = await startObsServer({
    host: config.metrics.host,
    port: options.metricsPort ?? config.metrics.port,
    metrics: env.metrics,
    killSwitch: env.killSwitch,
    logger: log,
    view: env.view,
    control: env.control,
    readsNeedToken: !isLoopbackHost(config.metrics.host),
    controlTokens: tokens,
    allowedHosts: config.metrics.allowedHosts,
    ...(config.metrics.token() !== undefined ? { metricsToken: config.metrics.token()! } : {}),
    now: () => env.clock.now(),
    ready: () =>
      !ledger.isOpen
        ? { ready: false, reason: 'ledger closed' }
        : health.lastApiOk
          ? { ready: true }
          : { ready: false, reason: 'API not reachable (last request failed)' },
  });
  log.info({ url: obs.url, dashboard: `${obs.url}/` }, 'metrics server listening');
  if (!isLoopbackHost(config.metrics.host) && tokens.length === 0)
    log.warn(
      { host: config.metrics.host, url: obs.url },
      'metrics server listens beyond loopback without a control token: its reads answer 403 and the bot cannot be paused through it (set control.token_env)',
    );
  if (!isLoopbackHost(config.metrics.host) && config.metrics.token() === undefined)
    log.warn(
      { host: config.metrics.host, url: obs.url },
      'metrics server listens beyond loopback with /metrics open: anyone who reaches the port reads it (set metrics.token_env)',
    );
  return obs;
}
