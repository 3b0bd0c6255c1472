/**
 * Every view of an order shows what was charged once it is known and marks the bound until then
 * (issue 37): a card order whose answer was lost and that was settled by its replay shows the
 * service's price and fee with its card; one still in doubt shows its max_price + fee as a bound;
 * a pack order its pack and quantity. `GET /api/v1/orders` and `packbot orders --json` give the
 * same answer (one `orderView`), checked against the answer's schema.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/api/errors.js';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { InDoubtResolver } from '../../src/bot/doubt/in-doubt.js';
import { RunnerView } from '../../src/bot/views/read-model.js';
import { toCents } from '../../src/core/money.js';
import { OrdersResponse, type OrderView } from '../../src/obs/api-schemas.js';
import { KillSwitch } from '../../src/obs/kill-switch.js';
import { type ObsServer, startObsServer } from '../../src/obs/server.js';
import { Ledger } from '../../src/store/ledger.js';
import { runCli } from '../cli/run-cli.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { shopWorld } from './card-world.js';
import { contextOf, executorOf, fixture } from './helpers.js';

let server: ObsServer | undefined;
let ledger: Ledger | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  ledger?.close();
  ledger = undefined;
  removeTempDirs();
});

/** A file ledger (the command reads it) beside the simulator, and a config naming it. */
function setUp() {
  const f = fixture({ world: shopWorld() });
  f.ledger.close();
  const dir = tempDir('packbot-order-view-');
  const path = join(dir, 'db', 'bot.db');
  mkdirSync(join(dir, 's'));
  writeFileSync(join(dir, 's', 'x.yaml'), 'x: 1\n');
  const config = join(dir, 'bot.yaml');
  writeFileSync(
    config,
    `format: packbot.config/v1\napi:\n  base_url: https://api.example.com\naccounts:\n  - name: main\n    strategy: s/x.yaml\nstore:\n  path: ${path}\n`,
  );
  ledger = Ledger.open(path, { clock: f.clock });
  return { f: { ...f, ledger }, config };
}

const byKey = (rows: readonly OrderView[], key: string) => rows.find((r) => r.key === key)!;

describe('an order as every view shows it', () => {
  it('a card order settled by replay at its charged price with its card; one in doubt at its bound', async () => {
    const { f, config } = setUp();
    const [a, b] = (await f.api.listShopCards({ category: 'pokemon' })).cards;
    let drops = 2;
    // Both card orders commit on the service, then their answers are lost.
    const api: PartnerApi = {
      ...f.api,
      purchaseCard: async (body, key) => {
        const r = await f.api.purchaseCard(body, key);
        if (drops-- > 0) throw new TransportError('reset', 'connection reset after the order committed');
        return r;
      },
    };
    const ex = executorOf(f, { api });
    const pack = await ex.open({
      body: { pack_type: 'lucky', category: 'pokemon', quantity: 2, risk_level: 'standard' },
      unitPriceCents: 1000,
    });
    expect(pack.status).toBe('confirmed');
    // max_price above the shop's price: the service charges its price, the bound is max_price + fee.
    const buy = (card: typeof a, over: number) => {
      const max = toCents(card!.price) + over;
      return ex.buyCard({ body: { card_id: card!.id, max_price: max / 100 }, maxPriceCents: max });
    };
    const settled = await buy(a, 246);
    const doubt = await buy(b, 500);
    expect([settled.status, doubt.status]).toEqual(['in_doubt', 'in_doubt']);

    // The card is in the vault: its key is re-sent and the replay carries the price paid.
    const resolver = new InDoubtResolver({
      ...contextOf(f),
      ledger: f.ledger,
      executor: ex,
      recheckMs: 1000,
    });
    const r = await resolver.resolve(f.ledger.getIntent(settled.intent.key)!);
    expect(r).toMatchObject({ status: 'confirmed', replay: true });

    const view = new RunnerView({
      mode: 'live',
      embedded: true,
      ledger: f.ledger,
      killSwitch: new KillSwitch(undefined, () => f.clock.now()),
      bots: [],
      now: () => f.clock.now(),
    });
    server = await startObsServer({ port: 0, metrics: f.metrics, view });
    const fromApi = OrdersResponse.parse(await (await fetch(`${server.url}/api/v1/orders`)).json());
    const cli = await runCli(['orders', '--config', config, '--json']);
    expect(cli.code).toBe(0);
    const fromCli = OrdersResponse.parse(JSON.parse(cli.stdout));
    expect(fromCli).toEqual(fromApi);
    expect(fromApi.in_doubt).toBe(1);

    const price = toCents(a!.price);
    expect(byKey(fromApi.orders, settled.intent.key)).toMatchObject({
      operation: 'card',
      state: 'confirmed',
      in_doubt: false,
      category: 'pokemon',
      pack_type: null,
      quantity: 1,
      card_id: a!.id,
      card_name: a!.name,
      charged_usd: (price + 100) / 100,
      price_usd: price / 100,
      fee_usd: 1,
      bound_usd: (price + 246 + 100) / 100,
      amount_is_bound: false,
      settled_by: null,
    });
    expect(byKey(fromApi.orders, doubt.intent.key)).toMatchObject({
      operation: 'card',
      state: 'in_doubt',
      in_doubt: true,
      category: null,
      card_id: b!.id,
      card_name: null,
      charged_usd: null,
      price_usd: null,
      fee_usd: null,
      bound_usd: (toCents(b!.price) + 500 + 100) / 100,
      amount_is_bound: true,
    });
    expect(byKey(fromApi.orders, pack.intent.key)).toMatchObject({
      operation: 'pack',
      pack_type: 'lucky',
      risk_level: 'standard',
      quantity: 2,
      card_id: null,
      charged_usd: 20,
      price_usd: null,
      bound_usd: 20,
      amount_is_bound: false,
    });
    // Only the order in doubt, as the dashboard's table asks for it.
    const onlyDoubt = OrdersResponse.parse(
      await (await fetch(`${server.url}/api/v1/orders?in_doubt=true`)).json(),
    );
    expect(onlyDoubt.orders.map((o) => o.key)).toEqual([doubt.intent.key]);

    // The table: the card by id and name at the service's charge, the bound marked as one.
    const table = (await runCli(['orders', '--config', config])).stdout;
    const line = (key: string) => table.split('\n').find((l) => l.startsWith(key))!;
    const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;
    expect(line(settled.intent.key)).toContain(`card ${a!.id} (${a!.name})`);
    expect(line(settled.intent.key)).toMatch(new RegExp(`\\) +\\${usd(price + 100)} `));
    expect(line(doubt.intent.key)).toContain(`card ${b!.id} `);
    expect(line(doubt.intent.key)).toContain(`<= ${usd(toCents(b!.price) + 600)}`);
    expect(line(pack.intent.key)).toMatch(/2 × lucky +\$20\.00 /);
  });
});
