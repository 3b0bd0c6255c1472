/**
 * The client's response cap (`api.max_response_mb`), over real HTTP on loopback: a 200 MB answer is
 * refused with a named error (RESPONSE_TOO_LARGE) once the cap is passed, a declared length over
 * the cap before a byte is read, and a purchase whose answer is cut off this way is in doubt, never
 * booked as failed or charged twice.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type HttpPartnerApi } from '../../src/api/client.js';
import { ResponseTooLargeError } from '../../src/api/errors.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../../src/api/read-body.js';
import { PurchaseExecutor } from '../../src/bot/spending/executor.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import { Ledger } from '../../src/store/ledger.js';
import { KEY, START, testLogger, testWorld } from '../bot/helpers.js';

const MB = 1024 * 1024;
const clock = new VirtualClock(START);
const market = new Market(testWorld(), { clock, seed: 7 });
let sim: SimServer;
let proxy: Server;
let base: string;
/** Bytes the big answers managed to write before the client hung up. */
const written = { chunked: 0 };
const clients: HttpPartnerApi[] = [];

/** 200 MB of a JSON string, 1 MB at a time, as fast as the client reads it. */
function flood(res: ServerResponse, declare: boolean): void {
  res.writeHead(200, {
    'content-type': 'application/json',
    ...(declare ? { 'content-length': String(200 * MB) } : {}),
  });
  const chunk = Buffer.alloc(MB, 'x');
  let sent = 0;
  const more = () => {
    while (sent < 200) {
      sent++;
      written.chunked += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    res.end();
  };
  res.on('close', () => {
    sent = 200;
  });
  more();
}

/** In front of the simulator: the account read floods, a purchase is forwarded, then flooded. */
async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '').replace('/api/partner/v1', '').split('?')[0];
  if (path === '/account') return flood(res, false);
  if (path === '/vault') return flood(res, true);
  let body = '';
  for await (const c of req) body += String(c);
  const upstream = await fetch(`${sim.url}${req.url}`, {
    method: req.method ?? 'GET',
    headers: Object.fromEntries(
      Object.entries(req.headers).filter(([k]) =>
        ['authorization', 'content-type', 'idempotency-key'].includes(k),
      ),
    ) as Record<string, string>,
    ...(body ? { body } : {}),
  });
  const text = await upstream.text();
  // The order ran (and charged) on the simulator; the answer that comes back is 200 MB.
  if (path === '/packs/purchase' && upstream.status === 200) return flood(res, false);
  res.writeHead(upstream.status, { 'content-type': 'application/json' });
  res.end(text);
}

beforeAll(async () => {
  sim = await startSimServer({ market, clock });
  proxy = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.destroy();
});
afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise<void>((r) => proxy.close(() => r()));
  await sim.close();
});

function client(maxResponseBytes?: number): HttpPartnerApi {
  const c = createHttpClient({
    baseUrl: base,
    apiKey: KEY,
    clock,
    retry: { maxAttempts: 1 },
    ...(maxResponseBytes !== undefined ? { maxResponseBytes } : {}),
  });
  clients.push(c);
  return c;
}

async function refusal(p: Promise<unknown>): Promise<ResponseTooLargeError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ResponseTooLargeError);
    return e as ResponseTooLargeError;
  }
  throw new Error('expected ResponseTooLargeError');
}

describe('the response cap', () => {
  it('refuses a 200 MB answer once past 32 MiB, with a named error', async () => {
    written.chunked = 0;
    const e = await refusal(client().getAccount());
    expect(e.code).toBe('RESPONSE_TOO_LARGE');
    expect(e.kind).toBe('invalid-data');
    expect(e.limitBytes).toBe(DEFAULT_MAX_RESPONSE_BYTES);
    expect(e.message).toMatch(
      /^GET \/account: response body passed \d+ bytes, more than the 33554432-byte cap/,
    );
    // The client hung up near the cap: the server could not push the whole 200 MB.
    expect(written.chunked).toBeLessThan(100 * MB);
  });

  it('refuses a declared Content-Length over the cap before reading the body', async () => {
    const e = await refusal(client(MB).getVault());
    expect(e.message).toContain(`declares ${200 * MB} bytes`);
  });

  it('takes the cap from the option; an answer under it is read as usual', async () => {
    const small = await client().getIdentity();
    expect(small.key.scopes.length).toBeGreaterThan(0);
    const e = await refusal(client(64).getIdentity());
    expect(e.message).toContain('64-byte cap');
  });
});

describe('a purchase whose answer is cut off by the cap', () => {
  it('is in doubt (it was charged), not failed', async () => {
    const { log } = testLogger();
    const ledger = Ledger.open(':memory:', { clock });
    const api = client();
    const ex = new PurchaseExecutor({ account: 'main', api, ledger, log });
    const before = market.ledger().length;
    const out = await ex.open({
      body: { pack_type: 'lucky', category: 'pokemon', quantity: 1, risk_level: 'standard' },
    });
    expect(out.status).toBe('in_doubt');
    expect(out.intent.state).toBe('in_doubt');
    expect(out.intent.errorCode).toBe('RESPONSE_TOO_LARGE');
    // The service charged once; the ledger keeps it unresolved until evidence settles it.
    expect(market.ledger().length).toBeGreaterThan(before);
    expect(ledger.unresolvedIntents('main').map((i) => i.key)).toEqual([out.intent.key]);
    ledger.close();
  });
});
