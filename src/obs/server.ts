/**
 * The local operations endpoint: `/metrics` (Prometheus), `/healthz` (the process is alive),
 * `/readyz` (the supplied check passes: API reachable and ledger open), the kill switch under
 * `/control`, and the dashboard at `/` with its read and control API under `/api/v1/`
 * (`api-routes.ts`, docs/api.md). Pause and resume need `Authorization: Bearer <token>`; with no
 * token configured they do not exist (404), so an unconfigured bot cannot be paused by anyone who
 * can reach the port. Every request first passes the Host check (421 otherwise: no DNS rebinding);
 * once a control token is configured every read needs it; `/metrics` may have a token of its own.
 * docs/security.md.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WallClock } from '../core/clock.js';
import { hostAllowed, hostAllowList } from '../core/host-check.js';
import { handleApi, type NamedToken, readAllowed, tokenName } from './api-routes.js';
import type { BotControl, BotView } from './bot-view.js';
import type { KillSwitch } from './kill-switch.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { RefusalLog, type RefusalReason } from './refusals.js';

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
  /** Bearer token for POST /control/pause|resume; undefined disables them. */
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

export const READY_TIMEOUT_MS = 2000;

function send(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  const text = typeof body === 'string' ? body : `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  res.end(text);
}

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
  const { metrics, killSwitch, controlToken, logger } = options;
  const tokens: readonly NamedToken[] =
    options.controlTokens ??
    (controlToken === undefined
      ? []
      : [{ name: options.controlTokenName ?? 'control', token: controlToken }]);
  const refusals = new RefusalLog({ logger, metrics, now: options.now ?? (() => new WallClock().now()) });
  const allowedHosts = hostAllowList(options.host ?? '127.0.0.1', options.allowedHosts ?? []);
  const metricsTokens: readonly NamedToken[] =
    options.metricsToken === undefined ? [] : [{ name: 'metrics', token: options.metricsToken }];
  const api = {
    tokens,
    readsNeedToken: options.readsNeedToken === true,
    refused: (reason: RefusalReason, route: string) => refusals.refused(reason, route),
    ...(options.view ? { view: options.view } : {}),
    ...(options.control ? { control: options.control } : {}),
    ...(options.eventsPollMs ? { eventsPollMs: options.eventsPollMs } : {}),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const route = `${method} ${path}`;
    // Before any route: a foreign Host gets a bare 421, nothing of ours.
    if (!hostAllowed(req.headers.host, allowedHosts)) {
      req.resume();
      refusals.refused('host', route, req.headers.host ?? '(none)');
      res.writeHead(421, { 'Content-Length': '0', Connection: 'close' });
      return res.end();
    }
    if (await handleApi(req, res, url, api)) return;
    switch (route) {
      case 'GET /metrics':
        if (metricsTokens.length > 0 && tokenName(req, metricsTokens) === undefined) {
          refusals.refused('token', route);
          res.setHeader('WWW-Authenticate', 'Bearer');
          return send(res, 401, { error: 'unauthorized' });
        }
        return send(res, 200, await metrics.text(), metrics.contentType);
      case 'GET /healthz':
        return send(res, 200, { status: 'ok' });
      case 'GET /readyz': {
        const r = await readiness(options.ready);
        return send(
          res,
          r.ready ? 200 : 503,
          r.ready ? { status: 'ready' } : { status: 'not ready', reason: r.reason },
        );
      }
      case 'GET /control/status':
        if (!killSwitch) return send(res, 404, { error: 'not found' });
        if (!readAllowed(req, res, api, route)) return;
        return send(res, 200, killSwitch.status());
      case 'POST /control/pause':
      case 'POST /control/resume': {
        if (!killSwitch || tokens.length === 0) return send(res, 404, { error: 'not found' });
        req.resume();
        const by = tokenName(req, tokens);
        if (by === undefined) {
          refusals.refused('token', route);
          res.setHeader('WWW-Authenticate', 'Bearer');
          return send(res, 401, { error: 'unauthorized' });
        }
        if (options.control) {
          // The same action as /api/v1/control/pause|resume (logged with who and why).
          const meta = { by, reason: route };
          await (path.endsWith('pause') ? options.control.pause(meta) : options.control.resume(meta));
          return send(res, 200, killSwitch.status());
        }
        const status = path.endsWith('pause') ? killSwitch.pause() : killSwitch.resume();
        logger?.warn({ route, paused: status.paused, reasons: status.reasons }, 'kill switch changed');
        return send(res, 200, status);
      }
      default:
        if (
          [
            '/metrics',
            '/healthz',
            '/readyz',
            '/control/status',
            '/control/pause',
            '/control/resume',
          ].includes(path)
        )
          return send(res, 405, { error: 'method not allowed' });
        return send(res, 404, { error: 'not found' });
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      logger?.error({ err: e }, 'observability endpoint failed');
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
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
