/**
 * Real crashes: the bot (the built CLI) trading as fast as the simulator allows is SIGKILLed at
 * arbitrary instants (before, during and after purchases and sell-backs), then restarted over the
 * same ledger. At the end the simulator's own books must show each order charged once, and every
 * pull it handed out must be in the ledger and settled (sold, listed or held), never lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/prng.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import { SimClock } from '../../src/market/sim-clock.js';
import { Ledger } from '../../src/store/ledger.js';
import { KEY, testWorld } from '../bot/helpers.js';
import { generousStrategy, removeTempDirs, tempDir, writeConfig } from './helpers.js';
import { built, startBot, stopBots } from './process.js';

afterAll(async () => {
  await stopBots();
  removeTempDirs();
});

describe.skipIf(!built())('crash safety with SIGKILL', () => {
  const clock = new SimClock();
  // No pause between purchases: the bot is almost always in the middle of something.
  // Bands large enough that rounds of back-to-back orders never empty the pool (no restock here).
  const base = testWorld();
  const pokemon = base.categories.pokemon!;
  const market = new Market(
    testWorld({
      rules: { min_seconds_between_purchases: 0, max_packs_per_day: 100_000 },
      categories: {
        pokemon: {
          ...pokemon,
          packs: pokemon.packs.map((p) => ({
            ...p,
            bands: p.bands.map((b) => ({
              ...b,
              generate: { count: 20_000, distribution: 'uniform' as const },
            })),
          })),
        },
      },
    }),
    {
      clock,
      seed: 5,
    },
  );
  let server: SimServer;
  const dir = tempDir('packbot-crash-');
  let config: string;
  beforeAll(async () => {
    server = await startSimServer({ market, clock, port: 0 });
    config = writeConfig(dir, { baseUrl: server.url, strategy: generousStrategy(dir) });
  });
  afterAll(async () => {
    await server.close();
  });

  it('never charges twice and never loses a pull', async () => {
    const rng = new Rng(42);
    const env = { PB_TEST_KEY: KEY };
    for (let round = 0; round < 6; round++) {
      const bot = startBot(['run', '--config', config], env);
      await bot.waitFor('order confirmed');
      // Let it run a little, then kill it without warning.
      await new Promise((r) => setTimeout(r, 50 + Math.floor(rng.next() * 400)));
      bot.child.kill('SIGKILL');
      expect((await bot.exit).signal).toBe('SIGKILL');
    }
    // A last run settles everything the crashes left behind, then stops cleanly.
    const last = startBot(['run', '--config', config], env);
    await last.waitFor('packbot running');
    await last.waitFor('order confirmed');
    last.child.kill('SIGTERM');
    expect((await last.exit).code).toBe(0);

    const ledger = Ledger.open(`${dir}/ledger.db`, { readonly: true });
    try {
      const data = ledger.reportData(0, Number.MAX_SAFE_INTEGER);
      const purchases = market.ledger().filter((e) => e.kind === 'pack_purchase' && e.accountId === 'acct_t');
      const refunds = market.ledger().filter((e) => e.kind === 'pack_refund' && e.accountId === 'acct_t');
      // Each order the service charged (and did not refund) is exactly one confirmed order in the ledger.
      const charged = purchases.map((e) => e.ref).filter((ref) => !refunds.some((r) => r.ref === ref));
      expect(new Set(charged).size).toBe(charged.length);
      // Orders settled by evidence (their answer was lost) carry `settled:<key>`, not the checkout id.
      expect(data.orders).toHaveLength(charged.length);
      const answered = data.orders.map((o) => o.checkoutId).filter((id) => !id.startsWith('settled:'));
      expect(charged).toEqual(expect.arrayContaining(answered));
      // The simulator books a charge as a negative amount.
      const chargedCents = purchases
        .filter((e) => charged.includes(e.ref))
        .reduce((n, e) => n - e.amountCents, 0);
      expect(data.orders.reduce((n, o) => n + o.totalChargedCents, 0)).toBe(chargedCents);
      expect(ledger.unresolvedCount()).toBe(0);
      // Every pull of every order is in the ledger and settled: nothing left undecided or unsold.
      expect(data.pulls.length).toBe(data.orders.reduce((n, o) => n + o.quantity, 0));
      expect(ledger.undecidedPulls()).toEqual([]);
      expect(ledger.pullsAwaitingSale()).toEqual([]);
      // Sold pulls were paid once each by the service.
      const paid = market.ledger().filter((e) => e.kind === 'sell_back' && e.accountId === 'acct_t');
      const sold = data.sellbacks.filter((s) => s.counted);
      expect(paid.length).toBe(sold.length);
      expect(paid.reduce((n, e) => n + e.amountCents, 0)).toBe(sold.reduce((n, s) => n + s.payoutCents, 0));
      expect(market.audit()).toEqual([]);
    } finally {
      ledger.close();
    }
  });
});
