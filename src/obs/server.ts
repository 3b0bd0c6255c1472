/**
 * The bot's HTTP server: every route of the table in `routes.ts` (Prometheus `/metrics`, `/healthz`,
 * `/readyz`, the dashboard at `/`, its read and control API under `/api/v1/` and the first version's
 * `/control/…`), dispatched by `router.ts`; docs/api.md lists them, `schemas/openapi.json` describes
 * them. Every request first passes the Host check (421 otherwise: no DNS rebinding); control needs
 * `Authorization: Bearer <token>` and, with no token configured, does not exist (404), so an
 * unconfigured bot cannot be paused by anyone who can reach the port; once a control token is
 * configured every read needs it; `/metrics` may have a token of its own. docs/security.md.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WallClock } from '../core/clock.js';
import { hostAllowed, hostAllowList } from '../core/host-check.js';
import type { NamedToken } from './access.js';
import type { BotControl, BotView } from './bot-view.js';
import type { KillSwitch } from './kill-switch.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { RefusalLog } from './refusals.js';
import { createRouter, send } from './router.js';
import { ROUTES } from './routes.js';

export type { NamedToken };

export interface ReadinessResult {
  ready: boolean;
  /** Why not ready (e.g. `ledger closed`, `API unreachable: ...`). */
  reason?: string;
}

export interface ObsServerOptions {
  host?: string;
  /** 0 picks a free port (tests). */
  port?: number;
  metrics: Metrics;
  /** Readiness: API reachable and ledger open. Given READY_TIMEOUT_MS, then counted as not ready. */
  ready?: () => Promise<ReadinessResult> | ReadinessResult;
  killSwitch?: KillSwitch;
  /** The bearer token control needs (and every read, once set); undefined: no control routes. */
  controlToken?: string;
  /** Name the single control token acts under (logs, ledger): default `control`. */
  controlTokenName?: string;
  /** Named control tokens (config `control.tokens`); replace `controlToken` when given. */
  controlTokens?: readonly NamedToken[];
  logger?: Logger;
  /** The running bot, read-only: serves `/api/v1/status` … `/api/v1/events`. */
  view?: BotView;
  /** The bot's actions: serves `/api/v1/control/…` (with the token). */
  control?: BotControl;
  /** The server listens beyond loopback: reads are refused (403) while no token is configured. */
  readsNeedToken?: boolean;
  /** Host names to answer to beyond loopback names, the listen address and IP literals (`metrics.allowed_hosts`). */
  allowedHosts?: readonly string[];
  /** Bearer token `/metrics` needs (`metrics.token_env`); undefined: open. */
  metricsToken?: string;
  /** The refusal log's clock (one warn line a minute per reason); default the wall clock. */
  now?: () => number;
  /** How often `/api/v1/events` looks for changes (ms; default 1000). */
  eventsPollMs?: number;
}

export interface ObsServer {
  url: string;
  close(): Promise<void>;
}

const READY_TIMEOUT_MS = 2000;

async function readiness(check: ObsServerOptions['ready']): Promise<ReadinessResult> {
  if (!check) return { ready: true };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ReadinessResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ ready: false, reason: 'readiness check timed out' }),
      READY_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([Promise.resolve().then(check), timeout]);
  } catch (e) {
    return { ready: false, reason: e instanceof Error ? e.message : String(e) };
  } finally {
    clearTimeout(timer);
  }
}

export async function startObsServer(options: ObsServerOptions): Promise<ObsServer> {
  const { metrics, controlToken, logger } = options;
  const tokens: readonly NamedToken[] =
    options.controlTokens ??
    (controlToken === undefined
      ? []
      : [{ name: options.controlTokenName ?? 'control', token: controlToken }]);
  const refusals = new RefusalLog({ logger, metrics, now: options.now ?? (() => new WallClock().now()) });
  const allowedHosts = hostAllowList(options.host ?? '127.0.0.1', options.allowedHosts ?? []);
  const metricsTokens: readonly NamedToken[] =
    options.metricsToken === undefined ? [] : [{ name: 'metrics', token: options.metricsToken }];
  const router = createRouter(ROUTES, {
    tokens,
    readsNeedToken: options.readsNeedToken === true,
    metricsTokens,
    refused: (reason, route) => refusals.refused(reason, route),
    deps: {
      metrics,
      logger,
      view: options.view,
      control: options.control,
      killSwitch: options.killSwitch,
      ready: () => readiness(options.ready),
      eventsPollMs: options.eventsPollMs ?? 1000,
    },
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '', 'http://x');
    // Before any route: a foreign Host gets a bare 421, nothing of ours.
    if (!hostAllowed(req.headers.host, allowedHosts)) {
      req.resume();
      refusals.refused('host', `${req.method ?? 'GET'} ${url.pathname}`, req.headers.host ?? '(none)');
      res.writeHead(421, { 'Content-Length': '0', Connection: 'close' });
      return res.end();
    }
    await router(req, res, url);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      logger?.error({ err: e }, 'observability endpoint failed');
      if (!res.headersSent) send(res, { status: 500, body: { error: 'internal error' } });
      else res.end();
    });
  });
  // Scrapes are short: don't let idle keep-alive sockets hold shutdown up.
  server.keepAliveTimeout = 1000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 9464, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
