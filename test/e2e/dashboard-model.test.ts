/**
 * The dashboard's expected-vs-realized panel in headless Chromium (Debian's, driven by
 * playwright-core): the bot's HTTP server with a read-only view whose `/api/v1/pnl` carries a
 * model block computed by model-gap.ts from orders drawn on the model's own world and on a world
 * whose listings do not sell. The panel draws the gap inside its 95% band, or out of it, and its
 * table shows each part with its z. Skipped where Chromium is missing.
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, iso } from '../../src/core/clock.js';
import {
  ListingsResponse,
  OrdersResponse,
  PnlResponse,
  PullsResponse,
  ScoresResponse,
  StatusResponse,
} from '../../src/obs/api-schemas.js';
import type { BotView } from '../../src/obs/bot-view.js';
import { Metrics } from '../../src/obs/metrics.js';
import { type ObsServer, startObsServer } from '../../src/obs/server.js';
import { listingCurve } from '../../src/strategy/listing-curve.js';
import { type ModelJson, type ModelOrder, modelGap, modelJson } from '../../src/strategy/model-gap.js';
import { strategy } from '../strategy-builder.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(`dashboard model panel test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

const START = Date.UTC(2026, 0, 5);
const s = strategy({ name: 'balanced' });
const curve = listingCurve(s);

/**
 * `n` one-pack orders an hour apart, each a 40 USD card listed at once, read at `now`: `asExpected`,
 * each listing has ended paying what the model expected of it; else none has sold, all still listed.
 */
function orders(n: number, asExpected: boolean, now: number): ModelOrder[] {
  return Array.from({ length: n }, (_, i): ModelOrder => {
    const at = START + i * HOUR_MS;
    const sold = asExpected;
    return {
      key: `k${i}`,
      at,
      strategy: 'balanced',
      digest: 'a'.repeat(64),
      category: 'pokemon',
      packType: 'promo',
      riskLevel: 'standard',
      spendCents: 3000,
      promise: {
        packs: 1,
        priceCents: 3000,
        evCents: 4000,
        realizedEvCents: Math.round(4000 * curve.mean),
        sdCents: Math.round(4000 * Math.sqrt(curve.variance)),
        pLoss: 0.2,
        parts: {
          sell_back: { meanCents: 0, sdCents: 0 },
          listing: { meanCents: Math.round(4000 * curve.mean), sdCents: 0 },
          held: { meanCents: 0, sdCents: 0 },
        },
      },
      pulls: [
        {
          part: 'listing',
          valueCents: 4000,
          state: sold ? 'resolved' : 'listed',
          cents: sold ? Math.round(4000 * curve.mean) : 0,
          listedAt: at,
          sellBackCents: 3200,
        },
      ],
    };
  }).filter((o) => o.at <= now);
}

function view(model: ModelJson): BotView {
  const now = iso(START + 3 * DAY_MS);
  return {
    status: () =>
      StatusResponse.parse({
        now,
        mode: 'live',
        embedded: true,
        pause: { paused: false, reasons: [], file: null, paused_at: null, by: null, note: null },
        accounts: [
          {
            name: 'main',
            strategy: 'balanced',
            balance_usd: 1000,
            balance_at: now,
            net_pnl_usd: 0,
            marked_pnl_usd: 0,
            cash_pnl_usd: 0,
            books: null,
            packs: { today: 0, left_today: 10, max_per_day: 100, resets_at: now },
            spend: {
              today_usd: 0,
              daily_cap_usd: 500,
              total_usd: 0,
              total_cap_usd: 5000,
              min_balance_usd: 100,
              stop_loss_usd: 1000,
            },
            next_purchase_at: null,
            waiting: null,
            pauses: [],
            orders_in_doubt: 0,
            listings_active: 0,
            holdings: 0,
            cards: null,
          },
        ],
      }),
    pnl: () => PnlResponse.parse({ accounts: [{ name: 'main', points: [], model }] }),
    pulls: () => PullsResponse.parse({ pulls: [] }),
    orders: () => OrdersResponse.parse({ in_doubt: 0, orders: [] }),
    listings: () => ListingsResponse.parse({ listings: [] }),
    scores: () => ScoresResponse.parse({ accounts: [] }),
    changes: () => ({ cursor: null, events: [] }),
  };
}

describe.skipIf(!hasChromium)('dashboard: expected vs realized panel', () => {
  let browser: Browser | undefined;
  let server: ObsServer | undefined;
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it.each([
    // Listings pay what the model expects of them: the gap stays at 0, inside the band.
    ['the model holds', true, false],
    // No listing ever sells: each unsold hour lowers the marks, out of the band.
    ['listings never sell', false, true],
  ])(
    '%s',
    async (_name, asExpected, outside) => {
      const now = START + 3 * DAY_MS;
      const model = modelJson(modelGap(orders(60, asExpected, now), now, () => curve));
      await server?.close();
      server = await startObsServer({
        port: 0,
        metrics: new Metrics({ defaultMetrics: false }),
        view: view(model),
      });
      const { chromium } = await import('playwright-core');
      browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
      const page = await browser.newPage({ viewport: { width: 1400, height: 1200 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${server.url}/`);
      const panel = page.getByTestId('model-main');
      await panel.waitFor();
      const svg = panel.locator('svg.chart');
      expect(Number(await svg.getAttribute('data-points'))).toBe(60);
      expect(await svg.locator('polygon.band').count()).toBe(1);
      expect(await svg.getAttribute('data-outside')).toBe(String(outside));
      expect(await svg.locator('path.gap.outside').count()).toBe(outside ? 1 : 0);
      const rows = page.getByTestId('model-table-main').locator('tbody tr');
      expect(await rows.count()).toBe(4);
      const listing = (await rows.nth(2).textContent()) ?? '';
      expect(listing).toContain('listing (cards listed)');
      expect(listing).toContain(model.parts.listing.z!.toFixed(2).replace(/^(\d)/, '+$1'));
      expect(Math.abs(model.parts.listing.z!) > 3).toBe(outside);
      expect(await rows.nth(2).locator('span.down').count()).toBe(outside ? 1 : 0);
      expect(errors).toEqual([]);
      await page.close();
    },
    60_000,
  );
});
