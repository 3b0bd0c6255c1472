/**
 * The simulator's HTTP shell (node:http, no framework): the Partner API under /api/partner/v1 and
 * a test-only admin API under /sim/v1. All rules live in the Market; this file only maps HTTP to
 * calls and errors to the spec's JSON bodies (`error`, `code`, extra fields, Retry-After).
 *
 * Any web page the operator opens can send requests to a loopback port: every request first passes
 * the Host check (421 and no body otherwise: no DNS rebinding, src/core/host-check.ts), and the
 * admin API takes only `application/json` bodies (415), which a page cannot send to another origin
 * without a CORS preflight this server never grants. docs/security.md.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPartnerApiError } from '../api/errors.js';
import { API_PREFIX, OPERATIONS, type Operation } from '../api/operations.js';
import { type Clock, iso } from '../core/clock.js';
import { hostAllowed, hostAllowList } from '../core/host-check.js';
import { FaultConfig } from './faults.js';
import type { Market } from './market.js';
import { isAdvanceable, SimClock } from './sim-clock.js';

const ADMIN_PREFIX = '/sim/v1';

/** path → method → operation, from the operations table. */
const ROUTES: Record<string, Partial<Record<string, Operation>>> = {};
for (const op of Object.keys(OPERATIONS) as Operation[]) {
  const { method, path } = OPERATIONS[op];
  ROUTES[path] = { ...ROUTES[path], [method]: op };
}

export interface SimServerOptions {
  market: Market;
  clock?: Clock;
  host?: string;
  port?: number;
  /** Called with unexpected (non-API) errors; default writes to stderr. */
  onError?: (err: unknown) => void;
  /** Host names answered besides loopback names, the listen address and IP literals (others: 421). */
  allowedHosts?: readonly string[];
}

export interface SimServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit)
      return reject(
        new HttpError(413, `request body is larger than ${limit} bytes`, { connection: 'close' }),
      );
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) over = true;
      else chunks.push(c);
    });
    req.on('end', () =>
      over
        ? reject(new HttpError(413, `request body is larger than ${limit} bytes`, { connection: 'close' }))
        : resolve(Buffer.concat(chunks)),
    );
    req.on('error', reject);
  });
}

function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    throw new HttpError(400, 'request body is not valid JSON');
  }
}

/**
 * An admin POST, or any admin request with a body, must say `Content-Type: application/json`: a
 * page of another origin can send a `text/plain` or empty POST without asking, never a JSON one.
 */
function requireJson(req: IncomingMessage): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const hasBody =
    req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if ((req.method === 'POST' || hasBody) && type !== 'application/json')
    throw new HttpError(415, 'the admin API takes only Content-Type: application/json');
}

function parseQuery(url: URL): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of url.searchParams) {
    if (k in q) throw new HttpError(400, `query parameter '${k}' is repeated`);
    q[k] = v;
  }
  return q;
}

export function startSimServer(opts: SimServerOptions): Promise<SimServer> {
  const { market } = opts;
  const clock = opts.clock ?? market.clock;
  const host = opts.host ?? '127.0.0.1';
  const limit = market.world.rules.max_body_bytes;
  const allowedHosts = hostAllowList(host, opts.allowedHosts ?? []);
  const onError =
    opts.onError ??
    ((e: unknown) => process.stderr.write(`sim: ${e instanceof Error ? e.stack : String(e)}\n`));

  async function partner(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
    const route = ROUTES[path];
    if (!route) throw new HttpError(404, `no such endpoint: ${path}`);
    const method = req.method ?? 'GET';
    const op = route[method];
    if (!op)
      throw new HttpError(405, `method ${method} not allowed on ${path}`, {
        allow: Object.keys(route).join(', '),
      });
    const endpoint = `${method} ${path}`;
    if (market.faults.roll(endpoint, 'drop_before')) {
      req.socket.destroy();
      return;
    }
    const query = parseQuery(url);
    const raw = await readBody(req, limit);
    let body: unknown;
    if (OPERATIONS[op].method !== 'GET') {
      // A bad key is reported before a bad body, as for every other request.
      market.authenticate(req.headers.authorization, op);
      body = parseJson(raw);
      if (body === undefined) throw new HttpError(400, 'request body is required (JSON object)');
    }
    const idem = req.headers['idempotency-key'];
    const result = await market.handle(op, {
      authorization: req.headers.authorization,
      idempotencyKey: Array.isArray(idem) ? idem.join(',') : idem,
      body,
      query,
    });
    if (market.faults.roll(endpoint, 'drop_after')) {
      req.socket.destroy();
      return;
    }
    if (market.faults.roll(endpoint, 'malformed')) {
      const text = JSON.stringify(result);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(text.slice(0, Math.max(1, Math.floor(text.length / 2))));
      return;
    }
    send(res, 200, result);
  }

  async function admin(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    requireJson(req);
    const body = method === 'GET' ? undefined : parseJson(await readBody(req, limit));
    const route = `${method} ${path}`;
    const obj = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    switch (route) {
      case 'GET /clock': {
        // A sped-up clock also says how to follow it from another process (its anchor and speed).
        const a = clock instanceof SimClock ? clock.anchor() : undefined;
        return send(res, 200, {
          now: iso(clock.now()),
          ...(a ? { speed: a.speed, anchor: { wall_ms: a.wallMs, sim_ms: a.simMs } } : {}),
        });
      }
      case 'POST /clock/advance': {
        const seconds = obj.seconds;
        if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0)
          throw new HttpError(400, 'seconds must be a number >= 0');
        if (!isAdvanceable(clock)) throw new HttpError(409, 'this clock cannot be advanced');
        await clock.advance(Math.round(seconds * 1000));
        market.syncNow();
        return send(res, 200, { now: iso(clock.now()) });
      }
      case 'GET /faults':
        return send(res, 200, { faults: market.faults.list() });
      case 'POST /faults': {
        const parsed = FaultConfig.safeParse(obj.faults ?? body);
        if (!parsed.success)
          throw new HttpError(
            400,
            `invalid fault config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
          );
        market.setFaults(parsed.data);
        return send(res, 200, { faults: market.faults.list() });
      }
      case 'DELETE /faults':
        market.faults.clear();
        return send(res, 200, { faults: {} });
      case 'GET /state':
        return send(res, 200, market.dump());
      case 'GET /ledger':
        return send(res, 200, {
          entries: market.ledger().map((e) => ({ ...e, at: iso(e.at), amount: e.amountCents / 100 })),
        });
      case 'GET /orders':
        return send(res, 200, { orders: market.finishedOrders() });
      case 'GET /listings':
        return send(res, 200, { listings: market.otherListings() });
      case 'POST /reset':
        market.reset();
        return send(res, 200, { reset: true, now: iso(clock.now()) });
      case 'POST /ship': {
        if (typeof obj.card_id !== 'string') throw new HttpError(400, 'card_id is required');
        return send(res, 200, market.ship(obj.card_id));
      }
      default:
        throw new HttpError(404, `no such admin endpoint: ${route}`);
    }
  }

  const server = createServer((req, res) => {
    // A real server's Date header is its own time: the simulator's is its clock's, which the
    // admin API can advance (snapshots and the purchase report are lined up on it).
    res.setHeader('date', new Date(clock.now()).toUTCString());
    if (!hostAllowed(req.headers.host, allowedHosts)) {
      req.resume();
      res.writeHead(421, { 'content-length': '0', connection: 'close' });
      res.end();
      return;
    }
    void (async () => {
      // Error bodies of the partner API are written as its answers are (answer-shape.ts).
      let shape = (body: unknown) => body;
      try {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const p = url.pathname.replace(/\/+$/, '') || '/';
        if (p.startsWith(`${API_PREFIX}/`)) {
          shape = (body) => market.shape(body);
          await partner(req, res, url, p.slice(API_PREFIX.length));
        } else if (p.startsWith(`${ADMIN_PREFIX}/`)) await admin(req, res, p.slice(ADMIN_PREFIX.length));
        else throw new HttpError(404, `no such endpoint: ${p}`);
      } catch (e) {
        if (res.headersSent || req.socket.destroyed) return;
        if (e instanceof HttpError) {
          send(res, e.status, shape({ error: e.message }), e.headers);
          if (e.status === 413) res.on('finish', () => req.socket.destroy());
        } else if (isPartnerApiError(e)) {
          const w = e.toWire();
          send(res, w.status, shape(w.body), w.headers ?? {});
        } else {
          onError(e);
          send(res, 500, shape({ error: 'internal server error' }));
        }
      }
    })();
  });
  server.keepAliveTimeout = 5000;

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://${host}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
