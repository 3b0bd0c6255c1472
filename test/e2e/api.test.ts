/**
 * The read and control API of a running bot (virtual clock, simulator over HTTP): every answer
 * matches its schema, control needs the token and a reason, delist and sell-back go through the
 * ledger (a decision recorded before the request, finished after a crash), a reload with a
 * broken strategy keeps the old one, and every route of the table (src/obs/routes.ts) answers as
 * schemas/openapi.json says.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import {
  ControlResult,
  ListingsResponse,
  OrdersResponse,
  PnlResponse,
  PullsResponse,
  ScoresResponse,
  StatusResponse,
} from '../../src/obs/api-schemas.js';
import { routeName } from '../../src/obs/route.js';
import { ROUTES } from '../../src/obs/routes.js';
import { driveUntil, KEY, LogSink, START, TrackingClock, testWorld } from '../bot/helpers.js';
import { expectDocumented, readOpenApi } from '../obs/openapi-check.js';
import { raw } from '../obs/raw-http.js';
import { BALANCED, removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterAll(removeTempDirs);

const TOKEN = 'api-test-token-0123456789';
const SLEEPERS = 3;

describe('read and control API of a running bot', () => {
  const virtual = new VirtualClock(START);
  const clock = new TrackingClock(virtual);
  const market = new Market(testWorld(), { clock: virtual, seed: 5 });
  const dir = tempDir();
  const sink = new LogSink();
  const strategyPath = join(dir, 'strategy.yaml');
  const good = readFileSync(BALANCED, 'utf8').replace(
    /max_daily_spend_usd: \d+/,
    'max_daily_spend_usd: 5000',
  );
  let server: SimServer;
  let runner: Runner;
  let url: string;

  const auth = { authorization: `Bearer ${TOKEN}` };
  const get = async (path: string) => (await fetch(`${url}/api/v1/${path}`, { headers: auth })).json();
  const control = (action: string, body: unknown, token: string | null = TOKEN) =>
    fetch(`${url}/api/v1/control/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    server = await startSimServer({ market, clock: virtual, port: 0 });
    writeFileSync(strategyPath, good);
    const configPath = writeConfig(dir, {
      baseUrl: server.url,
      strategy: strategyPath,
      extra: '  token_env: PB_TOKEN',
    });
    const config = loadBotConfig(configPath, { PB_TEST_KEY: KEY, PB_TOKEN: TOKEN });
    runner = await Runner.start(config, { clock, logDestination: sink, cadence: { sweepMs: 60_000 } });
    url = runner.obs!.url;
    await driveUntil(clock, START + 3 * HOUR_MS, SLEEPERS);
  });
  afterAll(async () => {
    await runner.stop('test done');
    await server.close();
  });

  it('answers every read with its schema, figures from the ledger and the account', async () => {
    const status = StatusResponse.parse(await get('status'));
    const main = status.accounts[0]!;
    expect(main.name).toBe('main');
    expect(main.packs.today).toBeGreaterThan(0);
    expect(main.packs.max_per_day).toBe(100);
    expect(main.balance_usd).toBeCloseTo((await market.api(KEY).getAccount()).balance, 2);
    expect(main.spend.daily_cap_usd).toBe(5000);
    const pnl = PnlResponse.parse(await get('pnl'));
    expect(pnl.accounts[0]!.points.length).toBeGreaterThan(2);
    // Expected vs realized: every pack order booked carries the model's promise.
    const model = pnl.accounts[0]!.model;
    expect(model.orders).toBeGreaterThan(0);
    expect(model.packs).toBe(main.packs.today);
    expect(model.excluded_orders).toBe(0);
    expect(model.series.length).toBe(Math.min(200, model.orders));
    expect(model.by_strategy.map((s) => s.strategy)).toEqual([model.by_strategy[0]!.strategy]);
    const pulls = PullsResponse.parse(await get('pulls?limit=5'));
    expect(pulls.pulls).toHaveLength(5);
    expect(pulls.pulls[0]!.decision).not.toBeNull();
    expect(pulls.pulls[0]!.seq).toBeGreaterThan(pulls.pulls[4]!.seq);
    const orders = OrdersResponse.parse(await get('orders'));
    expect(orders.orders.length).toBeGreaterThan(0);
    expect(orders.in_doubt).toBe(0);
    const listings = ListingsResponse.parse(await get('listings'));
    for (const l of listings.listings)
      expect(Date.parse(l.sell_back_at)).toBeGreaterThan(Date.parse(l.listed_at));
    const scores = ScoresResponse.parse(await get('scores'));
    expect(scores.accounts[0]!.rows.length).toBeGreaterThan(0);
    // With a token configured every read needs it, on loopback too.
    expect((await fetch(`${url}/api/v1/status`)).status).toBe(401);
    expect((await fetch(`${url}/api/v1/nope`)).status).toBe(404);
    expect((await fetch(`${url}/api/v1/status`, { method: 'POST' })).status).toBe(405);
  });

  it('streams the status at once, then changes (a pause) as events', async () => {
    const ac = new AbortController();
    const res = await fetch(`${url}/api/v1/events`, { signal: ac.signal, headers: auth });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text.startsWith('event: status\ndata: {')).toBe(true);
    await control('pause', { reason: 'event test' });
    const deadline = Date.now() + 60_000; // ends a hang; the pause event comes at once
    while (!/event: pause/.test(text) && Date.now() < deadline)
      text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    await control('resume', { reason: 'event test' });
    expect(text).toMatch(/event: pause\ndata: \{"type":"pause","pause":\{"paused":true/);
  });

  it('control needs the token and a reason; pause shows who and why', async () => {
    expect((await control('pause', { reason: 'x' }, null)).status).toBe(401);
    expect((await control('pause', { reason: 'x' }, 'wrong-token-0123456789')).status).toBe(401);
    expect((await control('pause', {})).status).toBe(400);
    const r = ControlResult.parse(await (await control('pause', { reason: 'checking the books' })).json());
    expect(r.pause).toMatchObject({ paused: true, by: 'control', note: 'checking the books' });
    const status = StatusResponse.parse(await get('status'));
    expect(status.pause.paused).toBe(true);
    expect(status.accounts[0]!.pauses.map((p) => p.reason)).toContain('kill_switch');
    const before = OrdersResponse.parse(await get('orders')).orders.length;
    await driveUntil(clock, clock.now() + HOUR_MS, SLEEPERS);
    expect(OrdersResponse.parse(await get('orders')).orders.length).toBe(before);
    // The legacy route is the same action.
    const legacy = await fetch(`${url}/control/resume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(legacy.status).toBe(200);
    expect(StatusResponse.parse(await get('status')).pause.paused).toBe(false);
    expect(sink.lines.some((l) => l.includes('"by":"control"') && l.includes('checking the books'))).toBe(
      true,
    );
  });

  it('delists one card, sells one back, delists all; each decision is in the ledger first', async () => {
    const before = ListingsResponse.parse(await get('listings')).listings;
    expect(before.length).toBeGreaterThan(1);
    const one = before[0]!;
    const d = ControlResult.parse(
      await (await control('delist', { card_id: one.card_id, reason: 'keep it' })).json(),
    );
    expect(d.cards).toEqual([{ account: 'main', card_id: one.card_id, result: 'delisted' }]);
    const pull = runner.ledger.getPull(one.pull_id!)!;
    expect(pull.status).toBe('held');
    expect(runner.ledger.decisionsFor(pull.pullId).at(-1)!.reason).toBe('operator control: keep it');
    const s = ControlResult.parse(
      await (await control('sell-back', { card_id: one.card_id, reason: 'cash' })).json(),
    );
    expect(s.cards[0]!.result).toMatch(/^sold /);
    expect(runner.ledger.getPull(one.pull_id!)!.status).toBe('sold');
    expect((await control('delist', { card_id: 'nope', reason: 'x' })).status).toBe(409);
    expect((await control('delist', { reason: 'x' })).status).toBe(400);

    // A crash between the decision and the delisting: the sell side finishes it from the ledger.
    const next = runner.ledger.activeListings()[0]!;
    runner.ledger.recordDecision({
      pullId: next.pullId!,
      action: 'hold',
      reason: 'operator control: crash test',
    });
    await runner.bots[0]!.sell.process();
    expect(runner.ledger.getListing(next.listingId)!.state).toBe('delisted');
    expect(runner.ledger.getPull(next.pullId!)!.status).toBe('held');

    const all = ControlResult.parse(
      await (await control('delist', { all: true, reason: 'closing shop' })).json(),
    );
    expect(all.cards.every((c) => c.result === 'delisted')).toBe(true);
    expect(ListingsResponse.parse(await get('listings')).listings).toEqual([]);
    const vault = await market.api(KEY).getVault();
    expect(vault.cards.filter((c) => c.listed)).toEqual([]);
  });

  it('reload keeps the old strategy when the new one is broken, and takes a valid one', async () => {
    writeFileSync(strategyPath, `${good}\nopen:\n  max_quantity: 11\n`);
    const bad = await control('reload', { reason: 'new caps' });
    expect(bad.status).toBe(409);
    const r = ControlResult.parse(await bad.json());
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/old strategies stay: .*strategy\.yaml/);
    expect(runner.bots[0]!.strategy.budget.max_daily_spend_usd).toBe(5000);
    writeFileSync(strategyPath, good.replace('max_daily_spend_usd: 5000', 'max_daily_spend_usd: 700'));
    const ok = ControlResult.parse(await (await control('reload', { reason: 'new caps' })).json());
    expect(ok.ok).toBe(true);
    expect(runner.bots[0]!.strategy.budget.max_daily_spend_usd).toBe(700);
    expect(StatusResponse.parse(await get('status')).accounts[0]!.spend.daily_cap_usd).toBe(700);
  });

  it('answers every route of the table with one of its answers, as schemas/openapi.json says', async () => {
    const doc = readOpenApi();
    for (const r of ROUTES) {
      // Valid requests: a card action on a card the bot never had is refused (409), not a 400.
      const card = r.path.endsWith('/delist') || r.path.endsWith('/sell-back');
      const body = r.body
        ? JSON.stringify({ reason: 'conformance', ...(card ? { card_id: 'nope' } : {}) })
        : undefined;
      // A parameter a route does not take is ignored.
      const query = r.query ? '?limit=3' : '';
      const res = await raw(url, r.path + query, {
        method: r.method,
        headers: r.access === 'read' || r.access === 'control' ? auth : {},
        ...(body !== undefined ? { body } : {}),
      });
      expect(Object.keys(r.answers), `${routeName(r)}: ${res.status} ${res.body.slice(0, 200)}`).toContain(
        String(res.status),
      );
      expectDocumented(doc, r, {
        status: res.status,
        type: String(res.headers['content-type']),
        body: res.body,
      });
    }
    // The pause and resume among them left the bot running.
    expect(StatusResponse.parse(await get('status')).pause.paused).toBe(false);
  });
});
