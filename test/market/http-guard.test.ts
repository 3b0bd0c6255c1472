/**
 * The simulator's server against a web page: a foreign Host is answered 421 with no body on the
 * Partner API and the admin API alike; the admin API takes only JSON bodies (415), so a page of
 * another origin cannot reset the simulator or inject faults with a simple (no-cors) request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultConfig } from '../../src/market/faults.js';
import { raw } from '../obs/raw-http.js';
import { type Sim, startSim } from './helpers.js';

let sim: Sim;
beforeAll(async () => {
  sim = await startSim();
});
afterAll(async () => {
  await sim.close();
});

const port = () => new URL(sim.server.url).port;

describe("the simulator's Host check", () => {
  it('answers a foreign Host with a bare 421 on the Partner API and the admin API', async () => {
    for (const [method, path] of [
      ['GET', '/api/partner/v1/me'],
      ['GET', '/sim/v1/clock'],
      ['POST', '/sim/v1/reset'],
      ['GET', '/sim/v1/state'],
    ] as const) {
      const r = await raw(sim.server.url, path, {
        method,
        host: `evil.example:${port()}`,
        headers: { authorization: 'Bearer sk_sim_full', 'content-type': 'application/json' },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(r.status, path).toBe(421);
      expect(r.body, path).toBe('');
    }
    const ok = await raw(sim.server.url, '/api/partner/v1/me', {
      host: `localhost:${port()}`,
      headers: { authorization: 'bearer sk_sim_full' },
    });
    expect(ok.status).toBe(200);
  });
});

describe("the simulator's admin API takes only JSON", () => {
  it.each([
    ['text/plain;charset=UTF-8', '{"seconds": 60}'],
    ['application/x-www-form-urlencoded', 'seconds=60'],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('a %s body is 415 and changes nothing', async (type, body) => {
    const before = sim.clock.now();
    const r = await raw(sim.server.url, '/sim/v1/clock/advance', {
      method: 'POST',
      headers: { 'content-type': type },
      body,
    });
    expect(r.status).toBe(415);
    expect(JSON.parse(r.body)).toMatchObject({ error: expect.stringContaining('application/json') });
    expect(sim.clock.now()).toBe(before);
  });

  it('a POST without a body and without JSON type is 415 too (a page can send one)', async () => {
    sim.market.setFaults(FaultConfig.parse({ 'GET /me': { error_rate: 0.5 } }));
    expect((await raw(sim.server.url, '/sim/v1/reset', { method: 'POST' })).status).toBe(415);
    expect(Object.keys(sim.market.faults.list())).toEqual(['GET /me']);
    const reset = await raw(sim.server.url, '/sim/v1/faults', {
      method: 'DELETE',
      headers: { 'content-type': 'application/json' },
    });
    expect(reset.status).toBe(200);
    expect(sim.market.faults.list()).toEqual({});
  });

  it('a JSON body is accepted, with a charset or not', async () => {
    const before = sim.clock.now();
    const r = await raw(sim.server.url, '/sim/v1/clock/advance', {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"seconds": 60}',
    });
    expect(r.status).toBe(200);
    expect(sim.clock.now()).toBe(before + 60_000);
  });
});
