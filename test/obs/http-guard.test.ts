/**
 * The bot's HTTP server against a web page and a network: the Host allow-list (421 before any
 * route), tokens on every read once one is configured, the `/metrics` token, the bearer scheme in
 * any case, and refused requests counted but logged at most once a minute per reason. Real HTTP on
 * loopback; requests that forge `Host` go through node:http (fetch sets its own).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hostAllowed, hostAllowList, hostHeaderName } from '../../src/core/host-check.js';
import type { BotView } from '../../src/obs/bot-view.js';
import { KillSwitch } from '../../src/obs/kill-switch.js';
import { createLogger } from '../../src/obs/logger.js';
import { Metrics } from '../../src/obs/metrics.js';
import { REFUSAL_LOG_INTERVAL_MS } from '../../src/obs/refusals.js';
import { type ObsServer, startObsServer } from '../../src/obs/server.js';
import { LogSink } from '../bot/helpers.js';
import { raw } from './raw-http.js';

const TOKEN = 'control-token-0123456789';
const METRICS_TOKEN = 'metrics-token-0123456789';
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

const port = (s: ObsServer) => new URL(s.url).port;
const bearer = (t: string, scheme = 'Bearer') => ({ authorization: `${scheme} ${t}` });

describe('Host allow-list (src/core/host-check.ts)', () => {
  it.each([
    ['localhost:9464', true],
    ['LOCALHOST', true],
    ['127.0.0.1:9464', true],
    ['[::1]:9464', true],
    ['packbot:9464', true],
    ['packbot.', true],
    ['10.0.0.7:9464', true],
    ['[fd00::7]', true],
    ['evil.example:9464', false],
    ['127.0.0.1.evil.example', false],
    ['localhost.evil.example', false],
    ['999.1.1.1', false],
    ['', false],
    [undefined, false],
    ['a b', false],
  ])('Host %j → %s', (header, ok) => {
    expect(hostAllowed(header, hostAllowList('127.0.0.1', ['packbot']))).toBe(ok);
  });

  it('answers to the listen address, not to a wildcard', () => {
    expect(hostAllowed('bot.internal:9464', hostAllowList('bot.internal'))).toBe(true);
    expect([...hostAllowList('0.0.0.0')].sort()).toEqual(['127.0.0.1', '::1', 'localhost']);
    expect(hostHeaderName('[::1]:80')).toBe('::1');
  });
});

describe("the bot's server", () => {
  it('answers a foreign Host with a bare 421 on every route, before any route runs', async () => {
    const ks = new KillSwitch(undefined, () => 0);
    const metrics = new Metrics({ defaultMetrics: false });
    server = await startObsServer({ port: 0, metrics, view, killSwitch: ks, allowedHosts: ['packbot'] });
    for (const path of ['/api/v1/status', '/api/v1/events', '/metrics', '/control/status', '/', '/healthz']) {
      const evil = await raw(server.url, path, { host: `evil.example:${port(server)}` });
      expect(evil.status, path).toBe(421);
      expect(evil.body, path).toBe('');
    }
    expect((await raw(server.url, '/control/pause', { method: 'POST', host: 'evil.example' })).status).toBe(
      421,
    );
    for (const host of [`localhost:${port(server)}`, `[::1]:${port(server)}`, 'packbot:9464', '10.1.2.3'])
      expect((await raw(server.url, '/api/v1/status', { host })).status, host).toBe(200);
    expect(await metrics.text()).toContain('packbot_http_refused_total{reason="host"} 7');
  });

  it('with a token configured, every read needs it on loopback too', async () => {
    const ks = new KillSwitch(undefined, () => 0);
    server = await startObsServer({
      port: 0,
      metrics: new Metrics({ defaultMetrics: false }),
      view,
      killSwitch: ks,
      controlToken: TOKEN,
    });
    for (const path of ['/api/v1/status', '/api/v1/pnl', '/api/v1/events', '/control/status']) {
      const none = await raw(server.url, path);
      expect(none.status, path).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Bearer');
      expect((await raw(server.url, path, { headers: bearer('wrong-token-0123456789') })).status).toBe(401);
      expect((await raw(server.url, path, { headers: bearer(TOKEN) })).status, path).toBe(200);
    }
    // The scheme is case-insensitive.
    for (const scheme of ['bearer', 'BEARER', 'Bearer'])
      expect((await raw(server.url, '/api/v1/status', { headers: bearer(TOKEN, scheme) })).status).toBe(200);
    // The dashboard's files carry no data: open, so the page can ask for the token.
    expect((await raw(server.url, '/')).status).toBe(200);
    expect((await raw(server.url, '/healthz')).status).toBe(200);
  });

  it('beyond loopback without any token, /control/status is refused like the reads', async () => {
    server = await startObsServer({
      port: 0,
      metrics: new Metrics({ defaultMetrics: false }),
      view,
      killSwitch: new KillSwitch(undefined, () => 0),
      readsNeedToken: true,
    });
    expect((await raw(server.url, '/control/status')).status).toBe(403);
    expect((await raw(server.url, '/api/v1/status')).status).toBe(403);
  });

  it('metrics.token_env protects /metrics alone', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    server = await startObsServer({ port: 0, metrics, view, metricsToken: METRICS_TOKEN });
    expect((await raw(server.url, '/metrics')).status).toBe(401);
    expect((await raw(server.url, '/metrics', { headers: bearer(TOKEN) })).status).toBe(401);
    const ok = await raw(server.url, '/metrics', { headers: bearer(METRICS_TOKEN, 'bearer') });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('packbot_http_refused_total{reason="token"} 2');
    expect((await raw(server.url, '/healthz')).status).toBe(200);
    expect((await raw(server.url, '/api/v1/status')).status).toBe(200);
  });

  it('200 refused requests write one log line per reason a minute, and count all 200', async () => {
    const sink = new LogSink();
    const log = createLogger({ level: 'info', pretty: 'never', destination: sink });
    let now = Date.UTC(2026, 0, 5);
    const metrics = new Metrics({ defaultMetrics: false });
    server = await startObsServer({
      port: 0,
      metrics,
      view,
      killSwitch: new KillSwitch(undefined, () => now),
      controlToken: TOKEN,
      logger: log,
      now: () => now,
    });
    // What a no-cors fetch from any web page sends: a text/plain body and no Authorization.
    const page = () =>
      raw(server!.url, '/control/pause', {
        method: 'POST',
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
        body: 'x',
      });
    for (let i = 0; i < 100; i++) expect((await page()).status).toBe(401);
    for (let i = 0; i < 100; i++)
      expect((await raw(server.url, '/api/v1/status', { host: 'evil.example' })).status).toBe(421);
    const refusals = () => sink.lines.filter((l) => l.includes('request refused'));
    expect(refusals()).toHaveLength(2);
    now += REFUSAL_LOG_INTERVAL_MS;
    expect((await page()).status).toBe(401);
    expect(refusals()).toHaveLength(3);
    expect(JSON.parse(refusals()[2]!)).toMatchObject({ reason: 'token', not_logged_since_last: 99 });
    const text = await metrics.text();
    expect(text).toContain('packbot_http_refused_total{reason="token"} 101');
    expect(text).toContain('packbot_http_refused_total{reason="host"} 100');
    expect(sink.lines.join('\n')).not.toContain(TOKEN);
  });
});
