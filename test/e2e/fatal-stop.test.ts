/**
 * A fatal answer mid-run does what docs/runner.md says: a 403 to a purchase (the key lost
 * `rip:packs`) stops opening and the runner, which exits 1 after its graceful stop. nock stands in
 * for the service (GETs answered by a simulated market): the simulator cannot revoke a scope.
 */
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ForbiddenError, isPartnerApiError } from '../../src/api/errors.js';
import { ENDPOINTS, type Operation } from '../../src/api/partner-api.js';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { Ledger } from '../../src/store/ledger.js';
import { driveUntil, KEY, LogSink, START, TrackingClock, testWorld } from '../bot/helpers.js';
import { generousStrategy, removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterEach(removeTempDirs);

const BASE = 'https://partner.example.com';
const PREFIX = '/api/partner/v1';
const GET_OPS = new Map<string, Operation>(
  (Object.entries(ENDPOINTS) as [Operation, string][])
    .filter(([, e]) => e.startsWith('GET '))
    .map(([op, e]) => [e.slice(4), op]),
);

describe('a fatal answer mid-run', () => {
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect(/127\.0\.0\.1/);
  });
  afterAll(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  it('a 403 to a purchase stops the runner with exit code 1', async () => {
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    const real = new Market(testWorld(), { clock: virtual, seed: 3 });
    let purchases = 0;
    nock(BASE)
      .persist()
      .get(/.*/)
      .reply(async (uri) => {
        const url = new URL(uri, BASE);
        const op = GET_OPS.get(url.pathname.slice(PREFIX.length));
        if (!op) return [404, { error: 'not found' }];
        try {
          return [
            200,
            await real.handle(op, {
              authorization: `Bearer ${KEY}`,
              query: Object.fromEntries(url.searchParams),
            }),
          ];
        } catch (e) {
          if (isPartnerApiError(e)) return [e.toWire().status, e.toWire().body];
          throw e;
        }
      })
      .post(`${PREFIX}/packs/purchase`)
      .reply(() => {
        purchases++;
        const wire = new ForbiddenError("key lacks the scope 'rip:packs'").toWire();
        return [wire.status, wire.body];
      });

    const dir = tempDir('packbot-fatal-');
    const path = writeConfig(dir, { baseUrl: BASE, mode: 'live', strategy: generousStrategy(dir) });
    const config = loadBotConfig(path, { PB_TEST_KEY: KEY });
    const sink = new LogSink();
    const runner = await Runner.start(config, { clock, logDestination: sink });
    let code: number | undefined;
    void runner.done.then((c) => {
      code = c;
    });
    // The runner stops itself: the drive ends with it (its loops never sleep again).
    await driveUntil(clock, START + HOUR_MS, 3, runner.done);
    await runner.done;
    expect(purchases).toBe(1);
    expect(code).toBe(1);
    expect(sink.messages()).toContain('stopped');
    const ledger = Ledger.open(`${dir}/ledger.db`, { readonly: true });
    try {
      expect(ledger.intentCounts()).toMatchObject({ failed: 1 });
    } finally {
      ledger.close();
    }
  });
});
