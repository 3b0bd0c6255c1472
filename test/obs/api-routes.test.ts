import { afterEach, describe, expect, it } from 'vitest';
import { generateApiJsonSchemas, staleApiJsonSchemas } from '../../src/obs/api-json-schemas.js';
import type { BotView } from '../../src/obs/bot-view.js';
import { Metrics } from '../../src/obs/metrics.js';
import { type ObsServer, startObsServer } from '../../src/obs/server.js';

const TOKEN = 'read-token-0123456789';
const view: BotView = {
  status: () => ({
    now: '2026-01-05T08:00:00.000Z',
    mode: 'live',
    embedded: true,
    pause: { paused: false, reasons: [], file: null, paused_at: null, by: null, note: null },
    accounts: [],
  }),
  pnl: () => ({ accounts: [] }),
  pulls: () => ({ pulls: [] }),
  orders: () => ({ in_doubt: 0, orders: [] }),
  listings: () => ({ listings: [] }),
  scores: () => ({ accounts: [] }),
  changes: () => ({ cursor: 0, events: [] }),
};

let server: ObsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const metrics = () => new Metrics({ defaultMetrics: false });

describe('read API access', () => {
  it('is open on loopback, and the dashboard is served with it', async () => {
    server = await startObsServer({ port: 0, metrics: metrics(), view });
    expect((await fetch(`${server.url}/api/v1/status`)).status).toBe(200);
    const page = await fetch(`${server.url}/`);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('/dashboard.js');
    expect((await fetch(`${server.url}/dashboard.js`)).status).toBe(200);
    expect((await fetch(`${server.url}/dashboard.css`)).status).toBe(200);
    // Control does not exist without a token.
    expect((await fetch(`${server.url}/api/v1/control/pause`, { method: 'POST' })).status).toBe(404);
  });

  it('needs the token when the server listens beyond loopback', async () => {
    server = await startObsServer({
      port: 0,
      metrics: metrics(),
      view,
      readsNeedToken: true,
      controlToken: TOKEN,
    });
    expect((await fetch(`${server.url}/api/v1/status`)).status).toBe(401);
    const ok = await fetch(`${server.url}/api/v1/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/events`)).status).toBe(401);
  });

  it('refuses reads beyond loopback when no token is configured', async () => {
    server = await startObsServer({ port: 0, metrics: metrics(), view, readsNeedToken: true });
    const res = await fetch(`${server.url}/api/v1/pulls`);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: expect.stringContaining('control.token_env') });
  });
});

describe('API JSON Schemas', () => {
  it('schemas/api-*.json match the zod schemas (regenerate: npm run schemas)', () => {
    expect(staleApiJsonSchemas(), 'stale or missing in schemas/: run npm run schemas').toEqual([]);
    expect(Object.keys(generateApiJsonSchemas())).toContain('api-status.schema.json');
  });
});

describe('named control tokens', () => {
  it('acts under the name of the token presented', async () => {
    const seen: string[] = [];
    const done =
      (action: 'pause' | 'resume' | 'delist' | 'sell-back' | 'reload') =>
      async (meta: { by: string; reason: string }) => {
        seen.push(`${meta.by}: ${meta.reason}`);
        return { action, ok: true, by: meta.by, reason: meta.reason, message: 'ok', cards: [], pause: null };
      };
    server = await startObsServer({
      port: 0,
      metrics: metrics(),
      view,
      control: {
        pause: done('pause'),
        resume: done('resume'),
        delist: (_t, meta) => done('delist')(meta),
        sellBack: (_t, meta) => done('sell-back')(meta),
        reload: done('reload'),
      },
      controlTokens: [
        { name: 'alice', token: 'alice-token-0123456789' },
        { name: 'bob', token: 'bob-token-0123456789' },
      ],
    });
    const post = (token: string) =>
      fetch(`${server!.url}/api/v1/control/reload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ reason: 'new strategy' }),
      });
    expect((await post('bob-token-0123456789')).status).toBe(200);
    expect((await post('alice-token-0123456789')).status).toBe(200);
    expect((await post('carol-token-0123456789')).status).toBe(401);
    expect(seen).toEqual(['bob: new strategy', 'alice: new strategy']);
  });
});
