import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KillSwitch } from '../../src/obs/kill-switch.js';
import { Metrics } from '../../src/obs/metrics.js';
import { type ObsServer, startObsServer } from '../../src/obs/server.js';

const TOKEN = 'control-token-0123456789';
let server: ObsServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const post = (url: string, token?: string) =>
  fetch(url, { method: 'POST', headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('observability server', () => {
  it('serves /metrics in Prometheus text format and /healthz', async () => {
    const metrics = new Metrics();
    metrics.spend(250);
    server = await startObsServer({ port: 0, metrics });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('packbot_spend_usd_total 2.5');
    expect(text).toContain('process_resident_memory_bytes');
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`, { method: 'DELETE' })).status).toBe(405);
  });

  it('/readyz follows the readiness check, including failures and throws', async () => {
    let state: 'ok' | 'down' | 'throw' = 'down';
    server = await startObsServer({
      port: 0,
      metrics: new Metrics({ defaultMetrics: false }),
      ready: () => {
        if (state === 'throw') throw new Error('ledger closed');
        return state === 'ok' ? { ready: true } : { ready: false, reason: 'API unreachable' };
      },
    });
    let res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ reason: 'API unreachable' });
    state = 'ok';
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    state = 'throw';
    res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ reason: 'ledger closed' });
  });

  it('pause/resume need the bearer token; the file pause wins over resume', async () => {
    dir = mkdtempSync(join(tmpdir(), 'packbot-ks-'));
    const file = join(dir, 'pause');
    const changes: boolean[] = [];
    const ks = new KillSwitch(
      file,
      () => 42,
      (s) => changes.push(s.paused),
    );
    server = await startObsServer({
      port: 0,
      metrics: new Metrics({ defaultMetrics: false }),
      killSwitch: ks,
      controlToken: TOKEN,
    });
    expect((await post(`${server.url}/control/pause`)).status).toBe(401);
    expect((await post(`${server.url}/control/pause`, 'wrong')).status).toBe(401);
    expect(ks.isPaused()).toBe(false);
    const paused = await post(`${server.url}/control/pause`, TOKEN);
    expect(paused.status).toBe(200);
    expect(await paused.json()).toMatchObject({ paused: true, reasons: ['endpoint'], pausedAt: 42 });
    expect(ks.isPaused()).toBe(true);
    writeFileSync(file, '');
    const resumed = await (await post(`${server.url}/control/resume`, TOKEN)).json();
    expect(resumed).toMatchObject({ paused: true, reasons: ['file'] });
    rmSync(file);
    // With a token configured the status is a read that needs it too.
    expect((await fetch(`${server.url}/control/status`)).status).toBe(401);
    const status = await fetch(`${server.url}/control/status`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(await status.json()).toMatchObject({
      paused: false,
      reasons: [],
    });
    // Reported on every change of reasons: none, endpoint, file, none.
    expect(changes).toEqual([false, true, true, false]);
  });

  it('without a token the control endpoints do not exist', async () => {
    const ks = new KillSwitch(undefined, () => 0);
    server = await startObsServer({
      port: 0,
      metrics: new Metrics({ defaultMetrics: false }),
      killSwitch: ks,
    });
    expect((await post(`${server.url}/control/pause`, 'anything')).status).toBe(404);
    expect(ks.isPaused()).toBe(false);
  });

  it('close() frees the port', async () => {
    const s = await startObsServer({ port: 0, metrics: new Metrics({ defaultMetrics: false }) });
    const url = s.url;
    await s.close();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
