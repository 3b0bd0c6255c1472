/**
 * The real transport (global fetch + undici Agent) against a loopback server: no nock here, so the
 * Agent's own connect/headers/body timeouts and socket errors are what is under test. Transport
 * deadlines are wall time by nature: a test that expects one to fire gets a short one (60 ms) on a
 * server that never answers that part, so it fires on any machine; every other deadline is long,
 * so a busy machine cannot turn an answer into a timeout.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type HttpPartnerApi } from '../../src/api/client.js';
import { InDoubtError, SchemaError, TransportError } from '../../src/api/errors.js';
import { VirtualClock } from '../../src/core/clock.js';
import * as F from './fixtures.js';

let server: Server;
let base: string;
const seen: Array<{ url: string; auth: string | undefined }> = [];
let api: HttpPartnerApi | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization });
    const p = (req.url ?? '').replace(F.PREFIX, '').split('?')[0];
    if (p === '/me') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(F.identity));
    }
    if (p === '/account') return; // never answers: headers timeout
    if (p === '/vault') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.write('{"category":'); // body stalls: body timeout
    }
    if (p === '/catalog/packs' || p === '/listings') return req.socket.destroy(); // reset
    if (p === '/catalog/cards') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<html>maintenance</html>');
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await api?.destroy();
  api = undefined;
  seen.length = 0;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const PATIENT = { connectMs: 10_000, headersMs: 10_000, bodyMs: 10_000, requestMs: 10_000 };

function client(baseUrl = base, timeouts: Partial<typeof PATIENT> = {}) {
  api = createHttpClient({
    baseUrl,
    apiKey: F.KEY,
    clock: new VirtualClock(F.T0),
    timeouts: { ...PATIENT, ...timeouts },
    retry: { maxAttempts: 1 },
    pacing: { readBudget: false },
  });
  return api;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as Error,
  );

describe('transport over loopback', () => {
  it('sends the bearer key under the API prefix and keeps the connection alive', async () => {
    const c = client(`${base}/`);
    await c.getIdentity();
    await c.getIdentity();
    expect(seen).toEqual([
      { url: `${F.PREFIX}/me`, auth: `Bearer ${F.KEY}` },
      { url: `${F.PREFIX}/me`, auth: `Bearer ${F.KEY}` },
    ]);
  });

  it('maps a headers timeout', async () => {
    const e = await failure(client(base, { headersMs: 60 }).getAccount());
    expect(e).toBeInstanceOf(TransportError);
    expect((e as TransportError).failure).toBe('timeout');
    expect(e.message).toMatch(/GET \/account: timed out/);
  });

  it('maps a body timeout', async () => {
    const e = await failure(client(base, { bodyMs: 60 }).getVault());
    expect(e).toBeInstanceOf(TransportError);
    expect((e as TransportError).failure).toBe('timeout');
    expect(e.message).toMatch(/reading the response body/);
  });

  it('maps a reset connection, and a reset listing write is in doubt', async () => {
    const e = await failure(client().listPacks());
    expect((e as TransportError).failure).toBe('reset');
    const w = await failure(client().createListing({ card_id: 'c1', price: 3 }));
    expect(w).toBeInstanceOf(InDoubtError);
  });

  it('maps a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const e = await failure(client(`http://127.0.0.1:${port}`).getIdentity());
    expect(e).toBeInstanceOf(TransportError);
    expect((e as TransportError).failure).toBe('connect');
  });

  it('a non-JSON 200 is a SchemaError', async () => {
    const e = await failure(client().listShopCards());
    expect(e).toBeInstanceOf(SchemaError);
    expect(e.message).toMatch(/GET \/catalog\/cards.*malformed JSON/);
  });
});
