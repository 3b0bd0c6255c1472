/**
 * runner-day.test.ts on the alternative legal servers (config/worlds/alt-*.yaml): the whole bot
 * over real HTTP for two simulated days on a virtual clock, against a simulator that makes every
 * choice the spec leaves open otherwise (seller fee, when listing proceeds arrive, how a bought card
 * is named, sealed packs in the vault, vault order, timestamps, unknown fields, key order, slow
 * order answers, error statuses and codes). The test world gains a consolation band, so sealed
 * packs reach the vault. The simulator sleeps on the bot's tracking clock: a purchase that takes
 * its time to answer is a sleeper like the bot's loops, and the drive advances past it.
 *
 * Checked on every world: the bot never crashes or stops, every answer the server sent matches the
 * spec's schema, each order is charged once and booked once with all its pulls, every card pull is
 * sold back at 0.9 or listed and every sealed pack held, no pull is left undecided. The books (the
 * ledger's charges, sell-back payouts and listing proceeds against the simulator's money entries,
 * and the balance it last saw) are their own case.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALT_WORLDS, worldLabel, worldRules } from '../../chaos/worlds.js';
import { OPERATIONS, type Operation } from '../../src/api/operations.js';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { DAY_MS, VirtualClock } from '../../src/core/clock.js';
import { toCents } from '../../src/core/money.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import type { Rules } from '../../src/market/world-schema.js';
import { Ledger } from '../../src/store/ledger.js';
import { driveUntil, KEY, LogSink, START, TrackingClock, testWorld } from '../bot/helpers.js';
import { BALANCED, removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterAll(removeTempDirs);

const SLEEPERS = 3; // open, sweep and reconcile loops of the one account
/** Two days (runner-day.test.ts drives four on the default server): limits, fills, delayed proceeds. */
const DAYS = 2;

/**
 * Why a world's books case is skipped, when the bot's books do not yet follow what that server
 * does (reported to the bot's owner; remove the entry once they do).
 */
const BOOKS_PENDING: Partial<Record<string, string>> = {};

/** The runner test world with the server's rules and a consolation band (sealed packs). */
function worldOn(rules: Rules) {
  const w = testWorld({ rules });
  const pack = w.categories.pokemon!.packs[0]!;
  const bands = [
    ...pack.bands.map((b) => ({ ...b, odds: { standard: (b.odds.standard ?? 0) * 0.95 } })),
    {
      bucket_id: 'sealed',
      min_value: 2,
      max_value: 4,
      is_consolation: true,
      odds: { standard: 0.05 },
      generate: { count: 200, distribution: 'uniform' as const },
    },
  ];
  return testWorld({
    rules,
    categories: { pokemon: { packs: [{ ...pack, bands }] } },
  });
}

describe.each(ALT_WORLDS.map((path) => ({ name: worldLabel(path), rules: worldRules(path) })))(
  'runner end to end on $name (virtual clock)',
  ({ name, rules }) => {
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    const market = new Market(worldOn(rules), { clock, seed: 11 });
    let server: SimServer;
    const dir = tempDir();
    const sink = new LogSink();
    let configPath: string;
    /** Answers the server sent that its operation's response schema refuses. */
    const invalid: string[] = [];
    let metricsText = '';
    let stopCode: number | undefined;

    beforeAll(async () => {
      const handle = market.handle.bind(market);
      market.handle = async (op: Operation, req) => {
        const answer = await handle(op, req);
        const parsed = OPERATIONS[op].response.safeParse(answer);
        if (!parsed.success) invalid.push(`${op}: ${parsed.error.issues[0]?.message}`);
        return answer;
      };
      server = await startSimServer({ market, clock: virtual, port: 0 });
      const strategy = join(dir, 'strategy.yaml');
      writeFileSync(
        strategy,
        readFileSync(BALANCED, 'utf8').replace(/max_daily_spend_usd: \d+/, 'max_daily_spend_usd: 5000'),
      );
      configPath = writeConfig(dir, { baseUrl: server.url, strategy });
      const runner = await Runner.start(loadBotConfig(configPath, { PB_TEST_KEY: KEY }), {
        clock,
        logDestination: sink,
        cadence: { sweepMs: 60_000 },
      });
      await driveUntil(clock, START + DAYS * DAY_MS, SLEEPERS, runner.done);
      metricsText = await (await fetch(`${runner.obs!.url}/metrics`)).text();
      await runner.stop('test done');
      stopCode = await runner.done;
    });
    afterAll(async () => {
      await server.close();
    });

    const withLedger = <T>(fn: (ledger: Ledger) => T): T => {
      const ledger = Ledger.open(`${dir}/ledger.db`, { readonly: true });
      try {
        return fn(ledger);
      } finally {
        ledger.close();
      }
    };
    const errorLines = () =>
      sink.lines.filter((l) => /"level":(50|60)/.test(l)).map((l) => (JSON.parse(l) as { msg: string }).msg);

    it('trades for days without a crash, reading every answer', () => {
      expect(stopCode, sink.lines.slice(-5).join('\n')).toBe(0);
      expect(invalid).toEqual([]);
      expect(errorLines()).toEqual([]);
      expect(market.audit()).toEqual([]);
    });

    it('charges each order once, books it once with every pull, and decides every pull', () => {
      withLedger((ledger) => {
        const data = ledger.reportData(0, clock.now());
        const simPurchases = market.ledger().filter((e) => e.kind === 'pack_purchase');
        expect(data.orders.length).toBeGreaterThan(10);
        expect(simPurchases.map((e) => e.ref).sort()).toEqual(data.orders.map((o) => o.checkoutId).sort());
        expect(data.pulls.length).toBe(data.orders.reduce((n, o) => n + o.quantity, 0));
        expect(ledger.unresolvedCount()).toBe(0);
        expect(ledger.undecidedPulls()).toEqual([]);
        // Every low card sold back in its 0.9 window, every card sold back or listed, sealed packs held.
        const firstSale = new Map(data.sellbacks.filter((s) => s.counted).map((s) => [s.pullId, s]));
        const cards = data.pulls.filter((p) => p.kind === 'card');
        const low = cards.filter((p) => p.valueCents < toCents(25));
        expect(low.length).toBeGreaterThan(100);
        expect(low.filter((p) => firstSale.get(p.pullId)?.payoutRate !== 0.9).map((p) => p.status)).toEqual(
          [],
        );
        const listedPulls = new Set(data.listings.map((l) => l.pullId));
        const neither = cards.filter((p) => !firstSale.has(p.pullId) && !listedPulls.has(p.pullId));
        expect(neither.map((p) => [p.pullId, p.status, p.valueCents])).toEqual([]);
        const sealed = data.pulls.filter((p) => p.kind === 'sealed_pack');
        expect(sealed.length).toBeGreaterThan(0);
        expect(new Set(sealed.map((p) => p.status))).toEqual(new Set(['held']));
      });
      expect(metricsText).toMatch(/packbot_sellback_window_missed_total\{account="main"\} 0\b/);
    });

    it('meets the limits without a refused request', () => {
      withLedger((ledger) => {
        const perDay = new Map<number, number>();
        for (const o of ledger.reportData(0, clock.now()).orders) {
          const day = Math.floor(o.createdAt / DAY_MS);
          perDay.set(day, (perDay.get(day) ?? 0) + o.quantity);
        }
        expect([...perDay.values()].slice(0, DAYS)).toEqual(Array(DAYS).fill(100));
      });
      expect(metricsText).not.toMatch(/packbot_api_requests_total\{[^}]*status="(4xx|429|5xx|transport)"/);
    });

    it.skipIf(BOOKS_PENDING[name] !== undefined)(
      `books: charges, payouts and the balance are the simulator's${BOOKS_PENDING[name] ? ` (skipped: ${BOOKS_PENDING[name]})` : ''}`,
      () => {
        const sim = market.ledger().filter((e) => e.accountId === 'acct_t');
        const simSum = (kinds: string[]) =>
          sim.filter((e) => kinds.includes(e.kind)).reduce((n, e) => n + e.amountCents, 0);
        withLedger((ledger) => {
          const data = ledger.reportData(0, clock.now());
          expect(data.listings.filter((l) => l.state === 'filled').length).toBeGreaterThan(0);
          const charges = data.orders.reduce((n, o) => n + o.totalChargedCents, 0);
          expect(charges).toBe(-simSum(['pack_purchase', 'pack_refund', 'card_purchase', 'card_fee']));
          const sold = data.sellbacks.filter((x) => x.counted).reduce((n, x) => n + x.payoutCents, 0);
          expect(sold).toBe(simSum(['sell_back']));
          const proceeds = data.listings.reduce((n, l) => n + (l.proceedsCents ?? 0), 0);
          expect(proceeds).toBe(simSum(['listing_sale', 'seller_fee']));
        });
        const seen = toCents(Number(/packbot_balance_usd\{account="main"\} ([\d.]+)/.exec(metricsText)?.[1]));
        expect(seen).toBe(market.balanceCents('acct_t'));
      },
    );
  },
);
