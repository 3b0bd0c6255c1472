/**
 * The dashboard in a real browser (Debian's Chromium, headless, driven by playwright-core): the
 * built bot trades on the embedded simulator with a sped-up clock; the page shows the balance
 * `/api/v1/status` reports, fills its P&L chart and pulls table as the bot trades, and shows a
 * pause set through the control API, after which no order is placed. A screenshot goes to the
 * temp directory (docs/dashboard.png when PACKBOT_SCREENSHOT=1 or when it is missing).
 * Skipped where Chromium is missing; fails instead in CI (`CI=true`: `.ci/run` installs it).
 */
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { OrdersResponse, StatusResponse } from '../../src/obs/api-schemas.js';
import { programMissing } from '../deploy/programs.js';
import { until } from '../until.js';
import { generousStrategy, ROOT, removeTempDirs, tempDir, writeConfig } from './helpers.js';
import { type BotProcess, built, startBot, stopBots } from './process.js';

afterAll(async () => {
  await stopBots();
  removeTempDirs();
});

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TOKEN = 'dashboard-test-token-0123456789';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  programMissing(`no Chromium at ${CHROMIUM}`, 'the dashboard browser test', 'apt-get install chromium');

const usd = (v: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(v);

/** Polls `check` (a child process and a browser: every 250 ms) until it returns true. */
const eventually = (what: string, check: () => Promise<boolean>) =>
  until(check, what, { limitMs: 60_000, everyMs: 250 });

describe.skipIf(!built() || !hasChromium)('dashboard in headless Chromium', () => {
  let bot: BotProcess | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    if (bot && bot.child.exitCode === null) {
      bot.child.kill('SIGTERM');
      await bot.exit;
    }
  });

  it('shows the status balance, fills chart and pulls as the bot trades, shows a pause', async () => {
    const dir = tempDir('packbot-dash-');
    const config = writeConfig(dir, {
      baseUrl: 'embedded',
      keyEnv: 'PB_UNSET_KEY',
      strategy: generousStrategy(dir),
      // One simulated minute every two seconds: a purchase slot every couple of seconds.
      extra: '  token_env: PB_TOKEN\nsim:\n  speed: 30',
    });
    bot = startBot(['run', '--config', config], { PB_TOKEN: TOKEN });
    const url = String((await bot.waitFor('metrics server listening')).url);
    await bot.waitFor('order confirmed');
    const api = async (path: string) =>
      (await fetch(`${url}/api/v1/${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json();

    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const page = await browser.newPage({ viewport: { width: 1400, height: 1500 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // With a token configured every read needs it: the page takes it from #token= once.
    await page.goto(`${url}/#token=${TOKEN}`);
    const balance = page.getByTestId('balance-main');
    await balance.waitFor();

    // The balance shown is the one /api/v1/status reports (the page follows the events stream).
    await eventually('page balance = /api/v1/status balance', async () => {
      const status = StatusResponse.parse(await api('status'));
      return (await balance.textContent()) === usd(status.accounts[0]!.balance_usd ?? Number.NaN);
    });
    // The books against the balance, as /api/v1/status has them (residual 0 on the simulator).
    await eventually('the books line', async () => {
      const text =
        (await page
          .getByTestId('books-main')
          .textContent()
          .catch(() => null)) ?? '';
      return /cash P&L .* = balance change .* − adjustments .* · residual \$0\.00/.test(text);
    });
    // Chart and pulls fill as the bot trades.
    await eventually('P&L chart with several points', async () => {
      const n = await page.locator('[data-testid="pnl-main"] svg.chart path.cash').count();
      const points = Number(
        await page.locator('[data-testid="pnl-main"] svg.chart').last().getAttribute('data-points'),
      );
      return n === 1 && points >= 3;
    });
    const rowsBefore = await page.locator('[data-testid="pulls-main"] tbody tr').count();
    expect(rowsBefore).toBeGreaterThan(0);
    await eventually('more pulls in the table', async () => {
      return (await page.locator('[data-testid="pulls-main"] tbody tr').count()) > rowsBefore;
    });
    expect(await page.locator('[data-testid="pulls-main"] tbody tr').first().textContent()).toMatch(/\$\d/);

    // Pause with the token: the page shows it, and no order follows.
    const paused = await fetch(`${url}/api/v1/control/pause`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'dashboard test' }),
    });
    expect(paused.status).toBe(200);
    const banner = page.getByTestId('pause-banner');
    await eventually(
      'pause banner',
      async () => (await banner.isVisible()) && /dashboard test/.test((await banner.textContent()) ?? ''),
    );
    expect(await page.getByTestId('pauses-main').textContent()).toContain('kill_switch');
    // The open loop has seen the pause (an order it had in flight is booked by then); then, on
    // the bot's own clock, three purchase slots (one a minute) go by with the loop still paused
    // and no order placed.
    const readStatus = async () => StatusResponse.parse(await api('status'));
    const pausedLoop = (s: StatusResponse) => s.accounts[0]!.waiting === 'kill switch is on';
    await eventually('the open loop waits on the kill switch', async () => pausedLoop(await readStatus()));
    const orders = OrdersResponse.parse(await api('orders?limit=1000')).orders.length;
    const from = Date.parse((await readStatus()).now);
    await eventually('three purchase slots on the bot clock, still paused', async () => {
      const s = await readStatus();
      return Date.parse(s.now) >= from + 3 * 60_000 && pausedLoop(s);
    });
    expect(OrdersResponse.parse(await api('orders?limit=1000')).orders.length).toBe(orders);
    await eventually('page balance = status balance after the pause', async () => {
      const status = StatusResponse.parse(await api('status'));
      return (await balance.textContent()) === usd(status.accounts[0]!.balance_usd ?? Number.NaN);
    });

    const shot = join(dir, 'dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    const doc = join(ROOT, 'docs/dashboard.png');
    if (process.env.PACKBOT_SCREENSHOT === '1' || !existsSync(doc)) copyFileSync(shot, doc);
    expect(errors).toEqual([]);
  });
});
