/**
 * The route table (src/obs/routes.ts) and its router: the server answers every route of the table
 * and nothing else, by one rule (404, 405, access, 400, handler), every answer of a fake bot is
 * the OpenAPI document's, and docs/api.md lists exactly these routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staleApiDocs } from '../../src/obs/api-docs.js';
import { answerSchemas } from '../../src/obs/api-json-schemas.js';
import { API_SCHEMAS } from '../../src/obs/api-schemas.js';
import type { BotControl, BotView, ReadQuery } from '../../src/obs/bot-view.js';
import { KillSwitch } from '../../src/obs/kill-switch.js';
import { Metrics } from '../../src/obs/metrics.js';
import { type Route, routeName } from '../../src/obs/route.js';
import { ROUTES } from '../../src/obs/routes.js';
import { type ObsServer, startObsServer } from '../../src/obs/server.js';
import { readSrc, srcFiles } from '../src-files.js';
import { expectDocumented, readOpenApi } from './openapi-check.js';
import { raw } from './raw-http.js';

const TOKEN = 'route-table-token-0123456789';
const METRICS_TOKEN = 'metrics-token-0123456789';
const auth = (t = TOKEN) => ({ authorization: `Bearer ${t}` });

const seen: ReadQuery[] = [];
const pause = { paused: false, reasons: [], file: null, paused_at: null, by: null, note: null };
const view: BotView = {
  status: () => ({ now: '2026-01-05T08:00:00.000Z', mode: 'live', embedded: true, pause, accounts: [] }),
  pnl: () => ({ accounts: [] }),
  pulls: () => ({ pulls: [] }),
  orders: (q) => {
    seen.push(q);
    return { in_doubt: 0, orders: [] };
  },
  listings: () => ({ listings: [] }),
  scores: () => ({ accounts: [] }),
  changes: () => ({ cursor: 0, events: [] }),
};
const acted: string[] = [];
const done =
  (action: 'pause' | 'resume' | 'delist' | 'sell-back' | 'reload') =>
  async (meta: { by: string; reason: string }, target?: unknown) => {
    acted.push(`${action} ${JSON.stringify(target ?? null)} ${meta.by}: ${meta.reason}`);
    return {
      action,
      ok: action !== 'reload',
      by: meta.by,
      reason: meta.reason,
      message: 'm',
      cards: [],
      pause: null,
    };
  };
const control: BotControl = {
  pause: done('pause'),
  resume: done('resume'),
  delist: (t, meta) => done('delist')(meta, t),
  sellBack: (t, meta) => done('sell-back')(meta, t),
  reload: done('reload'),
};

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];
/** Paths near the table's: none of them is served. */
const NEAR = [
  '/api/v1',
  '/api/v1/',
  '/api/v1/nope',
  '/api/v1/status/',
  '/api/v1/event',
  '/api/v1/control',
  '/api/v1/control/',
  '/api/v1/control/nope',
  '/api/v2/status',
  '/control',
  '/control/',
  '/control/nope',
  '/index.html',
  '/favicon.ico',
  '/dashboard',
  '/openapi.json',
  '/schemas/openapi.json',
  '/METRICS',
  '/healthz/',
];

let server: ObsServer;
let url: string;
beforeAll(async () => {
  server = await startObsServer({
    port: 0,
    metrics: new Metrics({ defaultMetrics: false }),
    view,
    control,
    killSwitch: new KillSwitch(undefined, () => 0),
    controlToken: TOKEN,
    metricsToken: METRICS_TOKEN,
    eventsPollMs: 50,
  });
  url = server.url;
});
afterAll(() => server.close());

const inTable = (method: string, path: string) => ROUTES.some((r) => r.method === method && r.path === path);

describe('the route table', () => {
  it('declares each method and path once', () => {
    const names = ROUTES.map(routeName);
    expect(new Set(names).size).toBe(names.length);
  });

  it('the server answers no route outside it (every method on its paths and paths near them)', async () => {
    const paths = [...new Set(ROUTES.map((r) => r.path)), ...NEAR];
    for (const path of paths)
      for (const method of METHODS) {
        // No token: a route of the table refuses (401) or answers; anything else is 404 or 405.
        const { status } = await raw(url, path, { method });
        const name = `${method} ${path}`;
        if (inTable(method, path)) expect([404, 405], name).not.toContain(status);
        else expect(status, name).toBe(ROUTES.some((r) => r.path === path) ? 405 : 404);
      }
  });

  it('leaves route literals to the table: no other module of src/obs names a served path', () => {
    const served = new Set(ROUTES.map((r) => r.path));
    for (const f of srcFiles().filter((f) => f.startsWith('obs/') && f !== 'obs/routes.ts')) {
      const code = readSrc(f)
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const m of code.matchAll(/(['"`])(\/[^'"`$]*)/g))
        expect(served.has(m[2]!) || m[2]!.startsWith('/api/'), `${f}: ${m[0]}`).toBe(false);
    }
  });

  it('names every JSON answer, and every named answer is some route’s', () => {
    expect([...answerSchemas().keys()].sort()).toEqual(Object.keys(API_SCHEMAS).sort());
  });

  it('is the route table of docs/api.md (regenerate: npm run schemas)', () => {
    expect(staleApiDocs(), 'docs/api.md lists other routes: run npm run schemas').toBe(false);
  });
});

describe('the router', () => {
  it('answers 405 with Allow to another method on a known path', async () => {
    const res = await raw(url, '/api/v1/status', { method: 'DELETE', headers: auth() });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expect(JSON.parse(res.body)).toEqual({ error: 'method not allowed' });
  });

  it('has no control route without a token configured, whatever the method', async () => {
    const bare = await startObsServer({
      port: 0,
      metrics: new Metrics({ defaultMetrics: false }),
      view,
      control,
      killSwitch: new KillSwitch(undefined, () => 0),
    });
    try {
      for (const path of ['/api/v1/control/pause', '/control/pause'])
        for (const method of ['GET', 'POST'])
          expect((await raw(bare.url, path, { method })).status).toBe(404);
      expect((await raw(bare.url, '/control/status')).status).toBe(200);
    } finally {
      await bare.close();
    }
  });

  it('parses the query by the route’s schema: 400 naming a bad parameter, limit capped at 1000', async () => {
    seen.length = 0;
    const get = (q: string) => raw(url, `/api/v1/orders${q}`, { headers: auth() });
    expect((await get('?limit=5000&in_doubt=1&account=main&other=x')).status).toBe(200);
    expect((await get('?limit=&in_doubt=false')).status).toBe(200);
    expect(seen).toEqual([{ limit: 1000, inDoubt: true, account: 'main' }, {}]);
    for (const [q, param] of [
      ['?limit=abc', 'limit'],
      ['?limit=0', 'limit'],
      ['?in_doubt=maybe', 'in_doubt'],
    ] as const) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect(JSON.parse(res.body).error).toMatch(new RegExp(`^query parameter ${param}: `));
    }
    // The access check comes first: no token, no word about the query.
    expect((await raw(url, '/api/v1/orders?limit=abc')).status).toBe(401);
  });

  it('parses a control body by the route’s schema, with the messages a person needs', async () => {
    acted.length = 0;
    const post = (path: string, body: string) =>
      raw(url, `/api/v1/control/${path}`, { method: 'POST', headers: auth(), body });
    const cases: [string, string, number, string?][] = [
      ['pause', '', 400, 'give a "reason" (why, for the log and the ledger)'],
      ['pause', '{"reason":"  "}', 400, 'give a "reason" (why, for the log and the ledger)'],
      ['pause', '[1]', 400, 'request body must be a JSON object'],
      ['pause', '{', 400, 'request body is not JSON'],
      ['pause', JSON.stringify({ reason: 'x'.repeat(20_000) }), 400, 'request body too large'],
      ['delist', '{"reason":"r"}', 400, 'give either "card_id": "<id>" or "all": true'],
      [
        'delist',
        '{"reason":"r","all":true,"card_id":"c"}',
        400,
        'give either "card_id": "<id>" or "all": true',
      ],
      ['delist', '{"reason":"r","card_id":5}', 400, 'give either "card_id": "<id>" or "all": true'],
      ['delist', '{"reason":" keep ","card_id":"c-1"}', 200],
      ['sell-back', '{"reason":"cash","all":true}', 200],
      ['reload', '{"reason":"new caps"}', 409],
    ];
    for (const [action, body, status, error] of cases) {
      const res = await post(action, body);
      expect(res.status, `${action} ${body.slice(0, 40)}`).toBe(status);
      if (error) expect(JSON.parse(res.body)).toEqual({ error });
    }
    expect(acted).toEqual([
      'delist {"cardId":"c-1"} control: keep',
      'sell-back {"all":true} control: cash',
      'reload null control: new caps',
    ]);
  });
});

describe('the events stream', () => {
  // The regression this guards: a stream stopped by the request's close, which comes as soon as
  // the router drains a GET, sent its first event and nothing after.
  it('sends the changes after the first event', async () => {
    const changing: BotView = {
      ...view,
      changes: (cursor) => ({
        cursor: Number(cursor ?? 0) + 1,
        events: cursor === undefined ? [] : [{ type: 'pause', pause }],
      }),
    };
    const s = await startObsServer({
      port: 0,
      metrics: new Metrics({ defaultMetrics: false }),
      view: changing,
      eventsPollMs: 20,
    });
    const ac = new AbortController();
    try {
      const res = await fetch(`${s.url}/api/v1/events`, { signal: ac.signal });
      const reader = res.body!.getReader();
      const pauses = () => (text.match(/event: pause/g) ?? []).length;
      let text = '';
      while (pauses() < 2) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      expect(text.startsWith('event: status\n')).toBe(true);
      expect(pauses()).toBe(2);
    } finally {
      ac.abort();
      await s.close();
    }
  });
});

/** A request each route answers with one of its own statuses (control routes act on the fake). */
function request(r: Route): { path: string; method: string; headers: Record<string, string>; body?: string } {
  const headers = r.access === 'metrics' ? auth(METRICS_TOKEN) : r.access === 'open' ? {} : auth();
  const body = r.body
    ? JSON.stringify(
        r.path.endsWith('delist') || r.path.endsWith('sell-back')
          ? { reason: 'r', all: true }
          : { reason: 'r' },
      )
    : undefined;
  return { path: r.path, method: r.method, headers, ...(body ? { body } : {}) };
}

describe('answers of a fake bot', () => {
  it('every route answers as schemas/openapi.json says', async () => {
    const doc = readOpenApi();
    for (const r of ROUTES) {
      const q = request(r);
      const res = await raw(url, q.path, q);
      expectDocumented(doc, r, {
        status: res.status,
        type: String(res.headers['content-type']),
        body: res.body,
      });
    }
  });

  it('refusals are documented too: 401, 400, 404, 421', async () => {
    const doc = readOpenApi();
    const find = (name: string) => ROUTES.find((r) => routeName(r) === name)!;
    const check = (name: string, res: { status: number; headers: Record<string, unknown>; body: string }) =>
      expectDocumented(doc, find(name), {
        status: res.status,
        type: res.headers['content-type'] === undefined ? null : String(res.headers['content-type']),
        body: res.body,
      });
    check('GET /api/v1/status', await raw(url, '/api/v1/status'));
    check('GET /metrics', await raw(url, '/metrics', { headers: auth() }));
    check('GET /api/v1/pulls', await raw(url, '/api/v1/pulls?limit=x', { headers: auth() }));
    check(
      'POST /api/v1/control/pause',
      await raw(url, '/api/v1/control/pause', { method: 'POST', headers: auth() }),
    );
    check('GET /healthz', await raw(url, '/healthz', { host: 'evil.example' }));
    const bare = await startObsServer({ port: 0, metrics: new Metrics({ defaultMetrics: false }) });
    try {
      check('GET /api/v1/status', await raw(bare.url, '/api/v1/status'));
    } finally {
      await bare.close();
    }
  });
});
