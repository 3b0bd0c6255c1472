/**
 * Dry-run reads the real API and never writes to it: every POST or DELETE to the real base URL
 * fails the test, while GETs are answered (by a simulated market standing in for the service).
 * Paper purchases, sell-backs and listings still happen, on the paper market.
 */
import { existsSync } from 'node:fs';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPartnerApiError } from '../../src/api/errors.js';
import { ENDPOINTS, type Operation } from '../../src/api/partner-api.js';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { Ledger } from '../../src/store/ledger.js';
import { driveUntil, KEY, LogSink, START, TrackingClock, testWorld } from '../bot/helpers.js';
import { generousStrategy, tempDir, writeConfig } from './helpers.js';

const BASE = 'https://partner.example.com';
const PREFIX = '/api/partner/v1';
const GET_OPS = new Map<string, Operation>(
  (Object.entries(ENDPOINTS) as [Operation, string][])
    .filter(([, e]) => e.startsWith('GET '))
    .map(([op, e]) => [e.slice(4), op]),
);

describe('dry-run', () => {
  const writes: string[] = [];
  const reads: string[] = [];
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect(/127\.0\.0\.1/);
  });
  afterAll(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  it('never calls a write endpoint of the real API, and trades on paper', async () => {
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    const real = new Market(testWorld(), { clock: virtual, seed: 3 });
    const realBalance = real.balanceCents('acct_t');
    nock(BASE)
      .persist()
      .get(/.*/)
      .reply(async (uri) => {
        const url = new URL(uri, BASE);
        reads.push(url.pathname);
        const op = GET_OPS.get(url.pathname.slice(PREFIX.length));
        if (!op) return [404, { error: 'not found' }];
        try {
          const body = await real.handle(op, {
            authorization: `Bearer ${KEY}`,
            query: Object.fromEntries(url.searchParams),
          });
          return [200, body];
        } catch (e) {
          if (isPartnerApiError(e)) return [e.toWire().status, e.toWire().body];
          throw e;
        }
      })
      .post(/.*/)
      .reply((uri) => {
        writes.push(`POST ${uri}`);
        return [500, { error: 'dry-run must not write' }];
      })
      .delete(/.*/)
      .reply((uri) => {
        writes.push(`DELETE ${uri}`);
        return [500, { error: 'dry-run must not write' }];
      });

    const dir = tempDir('packbot-dry-');
    const path = writeConfig(dir, { baseUrl: BASE, mode: 'dry-run', strategy: generousStrategy(dir) });
    const config = loadBotConfig(path, { PB_TEST_KEY: KEY }, { cwd: dir });
    expect(config.mode).toBe('dry-run');
    const sink = new LogSink();
    const runner = await Runner.start(config, { clock, logDestination: sink });
    await driveUntil(clock, START + 2 * HOUR_MS, 3);
    await runner.stop('test done');
    expect(await runner.done).toBe(0);

    expect(writes).toEqual([]);
    expect(reads.some((p) => p.endsWith('/catalog/packs/pool'))).toBe(true);
    // The real account was never charged...
    expect(real.balanceCents('acct_t')).toBe(realBalance);
    expect(real.ledger().filter((e) => e.accountId === 'acct_t')).toEqual([]);
    // ...while the paper account traded: orders, sell-backs and listings in the paper ledger, and
    // the live books were never created.
    expect(existsSync(`${dir}/ledger.db`)).toBe(false);
    const ledger = Ledger.open(`${dir}/ledger.dry-run.db`, { readonly: true });
    try {
      const data = ledger.reportData(0, clock.now());
      // The paper account mirrors the real limits: 100 packs a day, all used.
      expect(data.orders.reduce((n, o) => n + o.quantity, 0)).toBe(100);
      expect(data.sellbacks.filter((s) => s.counted).length).toBeGreaterThan(0);
      expect(data.listings.length).toBeGreaterThan(0);
    } finally {
      ledger.close();
    }
    expect(sink.text).not.toContain(KEY);
  }, 60_000);
});
