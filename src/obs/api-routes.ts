/**
 * `/api/v1/…` on the bot's HTTP server: the read API (JSON), its events stream (server-sent
 * events) and control (`/api/v1/control/…`, bearer token), plus the dashboard's static files at
 * `/`. Once a control token is configured every read needs one too; with none, reads are open on
 * loopback and refused (403) beyond it. Who acted is the token's name; why is the request's
 * `reason`. docs/api.md, docs/security.md.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ControlResult } from './api-schemas.js';
import type { ActionMeta, BotControl, BotView, CardTarget, ReadQuery } from './bot-view.js';
import type { RefusalReason } from './refusals.js';

export interface NamedToken {
  name: string;
  token: string;
}

export interface ApiOptions {
  view?: BotView;
  control?: BotControl;
  /** Tokens accepted for control and, once there is one, for every read. Empty: control is 404. */
  tokens: readonly NamedToken[];
  /** The server listens beyond loopback: reads need a token even when none is configured (403). */
  readsNeedToken: boolean;
  /** How often the events stream looks for changes (ms). */
  eventsPollMs?: number;
  /** Counts and (rate-limited) logs a refused request. */
  refused?: ((reason: RefusalReason, route: string) => void) | undefined;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The name of the token the request carries, or undefined. Constant time per token. The scheme is
 * case-insensitive (RFC 9110 §11.1): `bearer`, `BEARER` and `Bearer` are one.
 */
export function tokenName(req: IncomingMessage, tokens: readonly NamedToken[]): string | undefined {
  const m = /^Bearer +(.+?) *$/i.exec(req.headers.authorization ?? '');
  if (!m) return undefined;
  const given = digest(m[1]!);
  let found: string | undefined;
  for (const t of tokens) if (timingSafeEqual(given, digest(t.token)) && found === undefined) found = t.name;
  return found;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(`${JSON.stringify(body)}\n`);
}

const ASSETS: Record<string, [file: string, type: string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/dashboard.js': ['dashboard.js', 'text/javascript; charset=utf-8'],
  '/dashboard.css': ['dashboard.css', 'text/css; charset=utf-8'],
};
const assetCache = new Map<string, Buffer>();

/** The dashboard's files (src/obs/dashboard, copied beside the compiled module by the build). */
async function serveAsset(res: ServerResponse, path: string): Promise<boolean> {
  const asset = ASSETS[path];
  if (!asset) return false;
  let body = assetCache.get(asset[0]);
  if (!body) {
    body = await readFile(new URL(`./dashboard/${asset[0]}`, import.meta.url));
    assetCache.set(asset[0], body);
  }
  res.writeHead(200, {
    'Content-Type': asset[1],
    'Cache-Control': 'no-cache',
    'Content-Security-Policy':
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: http: https:",
  });
  res.end(body);
  return true;
}

function readQuery(url: URL): ReadQuery {
  const q: ReadQuery = {};
  const account = url.searchParams.get('account');
  if (account) q.account = account;
  const limit = url.searchParams.get('limit');
  if (limit && /^\d+$/.test(limit)) q.limit = Math.min(1000, Math.max(1, Number(limit)));
  if (url.searchParams.get('in_doubt') === 'true' || url.searchParams.get('in_doubt') === '1')
    q.inDoubt = true;
  return q;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 16_384) throw new BadRequest('request body too large');
  }
  if (text.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new BadRequest('request body is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new BadRequest('request body must be a JSON object');
  return v as Record<string, unknown>;
}

class BadRequest extends Error {}

function cardTarget(body: Record<string, unknown>): CardTarget {
  const card = body.card_id;
  if (body.all === true && card === undefined) return { all: true };
  if (typeof card === 'string' && card !== '' && body.all !== true) return { cardId: card };
  throw new BadRequest('give either "card_id": "<id>" or "all": true');
}

const READS = ['status', 'pnl', 'pulls', 'orders', 'listings', 'scores'] as const;
const ACTIONS = ['pause', 'resume', 'delist', 'sell-back', 'reload'] as const;

/**
 * Handles the request if it is the dashboard's or the API's; false otherwise (the caller goes on).
 * Legacy routes `/control/pause|resume` (token, no body needed) run the same actions.
 */
export async function handleApi(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  o: ApiOptions,
): Promise<boolean> {
  const path = url.pathname;
  const method = req.method ?? 'GET';
  if (method === 'GET' && ASSETS[path]) return serveAsset(res, path);
  if (!path.startsWith('/api/v1/')) return false;
  const name = path.slice('/api/v1/'.length);

  if (name.startsWith('control/')) {
    const action = name.slice('control/'.length);
    if (!o.control || o.tokens.length === 0 || !(ACTIONS as readonly string[]).includes(action)) {
      req.resume();
      sendJson(res, 404, { error: 'not found' });
      return true;
    }
    if (method !== 'POST') {
      req.resume();
      sendJson(res, 405, { error: 'method not allowed' });
      return true;
    }
    await runControl(req, res, action as (typeof ACTIONS)[number], o);
    return true;
  }

  if (!o.view || !((READS as readonly string[]).includes(name) || name === 'events')) {
    sendJson(res, 404, { error: 'not found' });
    return true;
  }
  if (method !== 'GET') {
    sendJson(res, 405, { error: 'method not allowed' });
    return true;
  }
  if (!readAllowed(req, res, o, `GET ${path}`)) return true;
  const view = o.view;
  const q = readQuery(url);
  switch (name as (typeof READS)[number] | 'events') {
    case 'status':
      sendJson(res, 200, view.status());
      break;
    case 'pnl':
      sendJson(res, 200, view.pnl(q));
      break;
    case 'pulls':
      sendJson(res, 200, view.pulls(q));
      break;
    case 'orders':
      sendJson(res, 200, view.orders(q));
      break;
    case 'listings':
      sendJson(res, 200, view.listings(q));
      break;
    case 'scores':
      sendJson(res, 200, view.scores(q));
      break;
    case 'events':
      streamEvents(req, res, view, o.eventsPollMs ?? 1000);
      break;
  }
  return true;
}

/**
 * Whether a read may be answered: with a token configured it must be presented (401), on loopback
 * too; with none, reads beyond loopback are refused (403). Answers the refusal itself.
 */
export function readAllowed(
  req: IncomingMessage,
  res: ServerResponse,
  o: Pick<ApiOptions, 'tokens' | 'readsNeedToken' | 'refused'>,
  route: string,
): boolean {
  if (o.tokens.length === 0) {
    if (!o.readsNeedToken) return true;
    o.refused?.('no_token', route);
    sendJson(res, 403, { error: 'reads need a token beyond loopback: set control.token_env' });
    return false;
  }
  if (tokenName(req, o.tokens) !== undefined) return true;
  o.refused?.('token', route);
  res.setHeader('WWW-Authenticate', 'Bearer');
  sendJson(res, 401, { error: 'unauthorized' });
  return false;
}

/**
 * Server-sent events: the status at once, then every change (new pulls, orders whose state moved,
 * pauses, a changed status) as it is seen. A comment line every 15 s keeps proxies from closing it.
 */
function streamEvents(req: IncomingMessage, res: ServerResponse, view: BotView, pollMs: number): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
  });
  const write = (type: string, data: unknown) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  write('status', { type: 'status', status: view.status() });
  let cursor = view.changes(undefined).cursor;
  let beats = 0;
  // Real timers: this paces an IO stream to a browser, not the bot's business timing.
  const timer = setInterval(() => {
    try {
      const c = view.changes(cursor);
      cursor = c.cursor;
      for (const e of c.events) write(e.type, e);
      if (++beats * pollMs >= 15_000) {
        beats = 0;
        res.write(': keep-alive\n\n');
      }
    } catch {
      // The ledger closed under us (shutdown): end the stream; the page reconnects.
      stop();
      res.end();
    }
  }, pollMs);
  timer.unref();
  const stop = () => clearInterval(timer);
  req.on('close', stop);
  res.on('close', stop);
}

async function runControl(
  req: IncomingMessage,
  res: ServerResponse,
  action: (typeof ACTIONS)[number],
  o: ApiOptions,
): Promise<void> {
  const by = tokenName(req, o.tokens);
  if (by === undefined) {
    req.resume();
    o.refused?.('token', `POST /api/v1/control/${action}`);
    res.setHeader('WWW-Authenticate', 'Bearer');
    return sendJson(res, 401, { error: 'unauthorized' });
  }
  let result: ControlResult;
  try {
    const body = await readBody(req);
    const reason =
      typeof body.reason === 'string' && body.reason.trim() !== '' ? body.reason.trim() : undefined;
    if (reason === undefined) throw new BadRequest('give a "reason" (why, for the log and the ledger)');
    const meta: ActionMeta = { by, reason: reason.slice(0, 500) };
    result = await control(o.control!, action, body, meta);
  } catch (e) {
    if (e instanceof BadRequest) return sendJson(res, 400, { error: e.message });
    throw e;
  }
  sendJson(res, result.ok ? 200 : 409, result);
}

function control(
  c: BotControl,
  action: (typeof ACTIONS)[number],
  body: Record<string, unknown>,
  meta: ActionMeta,
) {
  switch (action) {
    case 'pause':
      return c.pause(meta);
    case 'resume':
      return c.resume(meta);
    case 'delist':
      return c.delist(cardTarget(body), meta);
    case 'sell-back':
      return c.sellBack(cardTarget(body), meta);
    case 'reload':
      return c.reload(meta);
  }
}
