/**
 * One read model for an account's status: the running bot's `GET /api/v1/status` and the offline
 * `packbot status` describe the same account with the same fields and the same pauses, the
 * stop-loss included (the offline status used to miss it).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunnerView } from '../../src/bot/views/read-model.js';
import { ledgerStatus } from '../../src/cli/status.js';
import type { BotConfig } from '../../src/config/bot-config.js';
import { StatusResponse } from '../../src/obs/api-schemas.js';
import { KillSwitch } from '../../src/obs/kill-switch.js';
import { strategy } from '../strategy-builder.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { PACK } from './card-world.js';
import { executorOf, fixture, testBot, testWorld } from './helpers.js';

afterEach(removeTempDirs);

/** A pack worth less than its price (5-9 USD for 10): every order is a loss. */
const losing = testWorld({ categories: { pokemon: { packs: [PACK] } } } as Parameters<typeof testWorld>[0]);

describe('account status', () => {
  it('is the same online and offline, a stop-loss pause included', async () => {
    const s = strategy(
      {
        budget: {
          max_daily_spend_usd: 1000,
          max_total_spend_usd: 1000,
          min_balance_usd: 0,
          stop_loss_usd: 5,
        },
      },
      { base: 'bot' },
    );
    const f = fixture({ world: losing, strategy: s });
    const ex = executorOf(f);
    const body = { pack_type: 'lucky', category: 'pokemon', quantity: 3, risk_level: 'standard' } as const;
    expect((await ex.open({ body, unitPriceCents: 1000 })).status).toBe('confirmed');

    const dir = tempDir('packbot-status-');
    const killSwitch = new KillSwitch(join(dir, 'PAUSE'), () => f.clock.now());
    const bot = testBot(f, { onFatal: () => {} });
    const online = new RunnerView({
      mode: 'live',
      embedded: true,
      ledger: f.ledger,
      killSwitch,
      bots: [bot],
      now: () => f.clock.now(),
    }).status();
    const config = {
      mode: 'live',
      api: { embedded: true },
      store: { path: join(dir, 'packbot.db') },
      control: { killSwitchFile: join(dir, 'PAUSE') },
      accounts: [{ name: 'main', strategy: s }],
    } as unknown as BotConfig;
    const offline = ledgerStatus(config, f.ledger, f.clock.now());
    StatusResponse.parse(online);
    StatusResponse.parse(offline);

    const [a, b] = [online.accounts[0]!, offline.accounts[0]!];
    expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
    expect(a.pauses.map((p) => p.reason)).toEqual(['stop_loss']);
    expect(b.pauses).toEqual(a.pauses);
    // Three P&L figures: cash only (30 USD spent, nothing back yet); marked as the stop-loss reads
    // it (held cards at their late sell-back value, 0.8); net as `packbot report` (held cards at
    // what selling them back now pays: 0.9 inside the window).
    expect(a.cash_pnl_usd).toBe(-30);
    expect(a.marked_pnl_usd).toBeGreaterThan(a.cash_pnl_usd);
    expect(a.marked_pnl_usd).toBeLessThanOrEqual(-5);
    expect(a.net_pnl_usd).toBeGreaterThan(a.marked_pnl_usd);
    // Every pull still ours, each once (counted from the index, not read row by row).
    expect(a.holdings).toBe(3);
    expect(a.holdings).toBe(f.ledger.holdings('main').length);
    // Only what a running bot alone knows differs: its last account read and why it waits.
    const { waiting: wa, next_purchase_at: na, packs: pa, ...restA } = a;
    const { waiting: wb, next_purchase_at: nb, packs: pb, ...restB } = b;
    expect(restB).toEqual(restA);
    expect(pb.today).toBe(pa.today);
    expect(wb).toBe('the bot is not running');
    expect([wa, na, nb]).toEqual([null, null, null]);
  });
});
