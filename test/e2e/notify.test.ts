/**
 * The acceptance: a bot configured with a webhook to a local receiver delivers
 * `order_confirmed` while trading and `paused` when the kill switch file appears, and retries a
 * delivery the receiver refused with 500. In-process on a virtual clock (the embedded simulator
 * shares it), so the backoff passes in simulated time.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { VirtualClock } from '../../src/core/clock.js';
import { driveUntil, LogSink, START, TrackingClock } from '../bot/helpers.js';
import { type Receiver, startReceiver } from '../obs/notify/receiver.js';
import { until } from '../until.js';
import { removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterEach(removeTempDirs);

const SLEEPERS = 3;
const TOKEN = 'hooktoken_0123456789abcdef';

describe('notifications end to end', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('delivers order_confirmed while trading, retries a 500, and paused on the kill switch file', async () => {
    const dir = tempDir('packbot-notify-');
    const path = writeConfig(dir, {
      baseUrl: 'embedded',
      extra: [
        'notify:',
        '  webhooks:',
        '    - name: local',
        '      url_env: PB_HOOK',
        '      format: json',
        '      events: [order_confirmed, paused]',
      ].join('\n'),
    });
    const config = loadBotConfig(path, { PB_HOOK: `${receiver.url}/hook/${TOKEN}` });
    receiver.script = [500];
    const clock = new TrackingClock(new VirtualClock(START));
    const sink = new LogSink();
    const runner = await Runner.start(config, { clock, logDestination: sink, metricsPort: 0 });
    try {
      await driveUntil(clock, START + 10 * 60_000, SLEEPERS);
      const confirmed = () => receiver.received.filter((r) => r.body.event === 'order_confirmed');
      await until(() => confirmed().some((r) => r.status === 200), 'an order_confirmed delivered');
      const [refused, ...rest] = confirmed();
      expect(refused?.status).toBe(500);
      // The refused one came again (same id) and was taken; no id was delivered twice.
      expect(rest.find((r) => r.body.id === refused?.body.id)?.status).toBe(200);
      const delivered = confirmed()
        .filter((r) => r.status === 200)
        .map((r) => r.body.id);
      expect(new Set(delivered).size).toBe(delivered.length);
      expect(refused?.body).toMatchObject({ account: 'main', data: { quantity: expect.any(Number) } });
      expect(runner.ledger.reportData(0, clock.now()).orders.length).toBeGreaterThan(0);

      writeFileSync(config.control.killSwitchFile, '');
      await driveUntil(clock, clock.now() + 60_000, SLEEPERS);
      await until(() => receiver.received.some((r) => r.body.event === 'paused'), 'paused delivered');
      expect(receiver.received.find((r) => r.body.event === 'paused')?.body).toMatchObject({
        event: 'paused',
        account: null,
        data: { reasons: ['file'] },
      });
      const metrics = await (await fetch(`${runner.obs!.url}/metrics`)).text();
      expect(metrics).toMatch(/packbot_notifications_total\{event="paused",result="sent"\} 1/);
      expect(metrics).toMatch(/packbot_notifications_total\{event="order_confirmed",result="sent"\} [1-9]/);
      expect(metrics).not.toContain(TOKEN);
    } finally {
      await runner.stop('test done');
    }
    expect(await runner.done).toBe(0);
    expect(sink.text).toContain('notification refused, will retry');
    expect(sink.text).not.toContain(TOKEN);
    expect(sink.text).not.toContain(receiver.url);
  });
});
