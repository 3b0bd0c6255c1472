/** The notifier fans an event out to the webhooks subscribed to its kind, each in its own format. */
import { afterEach, describe, expect, it } from 'vitest';
import type { NotifyConfig, WebhookConfig } from '../../../src/config/notify-config.js';
import { VirtualClock } from '../../../src/core/clock.js';
import { createLogger } from '../../../src/obs/logger.js';
import { Metrics } from '../../../src/obs/metrics.js';
import { NO_NOTIFIER } from '../../../src/obs/notify/event.js';
import { createNotifier, type WebhookNotifier } from '../../../src/obs/notify/notifier.js';
import { LogSink } from '../../bot/helpers.js';
import { type Receiver, startReceiver } from './receiver.js';

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
});

const hook = (name: string, format: WebhookConfig['format'], events: WebhookConfig['events'], url: string) =>
  ({
    name,
    format,
    events,
    chatId: format === 'telegram' ? 42 : undefined,
    urlEnv: undefined,
    url: () => url,
  }) as WebhookConfig;

describe('webhook notifier', () => {
  it('sends each event to the webhooks that want it, in their formats', async () => {
    receiver = await startReceiver();
    const config: NotifyConfig = {
      bigPullMultiple: 10,
      queueSize: 10,
      timeoutMs: 10_000,
      maxAttempts: 2,
      webhooks: [
        hook('all', 'json', ['paused', 'fatal'], `${receiver.url}/json`),
        hook('chat', 'telegram', ['fatal'], `${receiver.url}/tg`),
      ],
    };
    const deps = {
      clock: new VirtualClock(0),
      log: createLogger({ level: 'silent', destination: new LogSink() }),
      metrics: new Metrics({ defaultMetrics: false }),
    };
    const n = createNotifier(config, deps) as WebhookNotifier;
    expect(n.wants('fatal')).toBe(true);
    expect(n.wants('order_confirmed')).toBe(false);
    const at = Date.UTC(2026, 0, 5);
    n.notify({
      id: 'p',
      event: 'paused',
      account: null,
      at,
      summary: 'paused (file)',
      data: { reasons: ['file'] },
    });
    n.notify({ id: 'f', event: 'fatal', account: null, at, summary: 'boom', data: {} });
    n.notify({ id: 'o', event: 'order_confirmed', account: 'main', at, summary: 'x', data: {} });
    await n.idle();
    await n.close();
    const got = receiver.received.map((r) => `${r.path} ${JSON.stringify(r.body)}`).sort();
    expect(got).toEqual([
      '/json {"id":"f","event":"fatal","account":null,"at":"2026-01-05T00:00:00.000Z","summary":"boom","data":{}}',
      '/json {"id":"p","event":"paused","account":null,"at":"2026-01-05T00:00:00.000Z","summary":"paused (file)","data":{"reasons":["file"]}}',
      '/tg {"chat_id":42,"text":"packbot fatal: boom"}',
    ]);
    expect(createNotifier(undefined, deps)).toBe(NO_NOTIFIER);
  });
});
