/**
 * One webhook's delivery against a receiver on 127.0.0.1: bounded (oldest dropped), each id once,
 * retries with backoff on the virtual clock for 5xx, 429 and timeouts but never for a 4xx, and no
 * URL (with its token) in any log line even with no secret registered with the logger.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../src/core/clock.js';
import { createLogger, SecretRegistry } from '../../../src/obs/logger.js';
import { Metrics } from '../../../src/obs/metrics.js';
import type { NotifyEvent } from '../../../src/obs/notify/event.js';
import { backoffMs, WebhookQueue } from '../../../src/obs/notify/webhook-queue.js';
import { LogSink } from '../../bot/helpers.js';
import { until } from '../../until.js';
import { type Receiver, startReceiver } from './receiver.js';

const TOKEN = 'T0KEN-abcdefghijklmnopqrstuvwxyz';
let receiver: Receiver;
let clock: VirtualClock;
let metrics: Metrics;
let sink: LogSink;
const queues: WebhookQueue[] = [];

beforeEach(async () => {
  receiver = await startReceiver();
  clock = new VirtualClock(Date.UTC(2026, 0, 5));
  metrics = new Metrics({ defaultMetrics: false });
  sink = new LogSink();
});
afterEach(async () => {
  for (const q of queues.splice(0)) await q.close(100);
  await receiver.close();
});

function queue(
  over: Partial<ConstructorParameters<typeof WebhookQueue>[0]> = {},
  url?: string,
): WebhookQueue {
  const q = new WebhookQueue({
    webhook: {
      name: 'ops',
      format: 'json',
      chatId: undefined,
      url: () => url ?? `${receiver.url}/hook/${TOKEN}`,
    },
    clock,
    // No secret registered: the queue itself must never write the URL.
    log: createLogger({ level: 'debug', pretty: 'never', destination: sink }),
    metrics,
    queueSize: 10,
    timeoutMs: 10_000, // a loopback answer always beats it; the timeout test sets 200 ms
    maxAttempts: 4,
    ...over,
  });
  queues.push(q);
  return q;
}

const ev = (id: string, event: NotifyEvent['event'] = 'order_confirmed'): NotifyEvent => ({
  id,
  event,
  account: 'main',
  at: clock.now(),
  summary: `summary ${id}`,
  data: {},
});

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await metrics.notificationsTotal.get()).values)
    out[`${v.labels.event}/${v.labels.result}`] = v.value;
  return out;
}

describe('webhook queue', () => {
  it('posts the body to the URL and counts it sent', async () => {
    const q = queue();
    expect(q.push(ev('a'))).toBe(true);
    await q.idle();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.path).toBe(`/hook/${TOKEN}`);
    expect(receiver.received[0]!.body).toMatchObject({
      id: 'a',
      event: 'order_confirmed',
      summary: 'summary a',
    });
    expect(await counts()).toEqual({ 'order_confirmed/sent': 1 });
  });

  it('delivers an id at most once', async () => {
    const q = queue();
    expect(q.push(ev('a'))).toBe(true);
    expect(q.push(ev('a'))).toBe(false);
    await q.idle();
    expect(q.push(ev('a'))).toBe(false);
    await q.idle();
    expect(receiver.received.map((r) => r.body.id)).toEqual(['a']);
  });

  it('is bounded: when full the oldest waiting event is dropped and counted', async () => {
    receiver.hold = true; // the first request hangs: everything else waits in the queue
    const q = queue({ queueSize: 3 });
    q.push(ev('first'));
    await receiver.waitFor(1);
    for (const id of ['b', 'c', 'd', 'e', 'f']) q.push(ev(id, id === 'f' ? 'fatal' : 'order_confirmed'));
    expect(q.pending).toBe(3);
    expect(await counts()).toEqual({ 'order_confirmed/dropped': 2 });
    expect(sink.text).toContain('notification queue full: dropped the oldest');
    // Shutdown: the held request is aborted after the grace, what still waits is dropped.
    await q.close(50);
    const c = await counts();
    expect(c['order_confirmed/dropped']! + c['fatal/dropped']! + (c['order_confirmed/failed'] ?? 0)).toBe(6);
  });

  it('retries a 500 after a backoff on the injected clock, then sends', async () => {
    receiver.script = [500, 503];
    const q = queue();
    q.push(ev('a'));
    await receiver.waitFor(1);
    await until(() => clock.nextWakeAt() !== undefined, 'first backoff');
    expect(clock.nextWakeAt()).toBe(clock.now() + 1000);
    await clock.advance(999);
    expect(receiver.received).toHaveLength(1);
    await clock.advance(1);
    await receiver.waitFor(2);
    await until(() => clock.nextWakeAt() !== undefined, 'second backoff');
    expect(clock.nextWakeAt()).toBe(clock.now() + 2000);
    await clock.advance(2000);
    await q.idle();
    expect(receiver.received.map((r) => r.status)).toEqual([500, 503, 200]);
    expect(receiver.received.map((r) => r.body.id)).toEqual(['a', 'a', 'a']);
    expect(await counts()).toEqual({ 'order_confirmed/sent': 1 });
  });

  it('honours a 429 Retry-After longer than the backoff', () => {
    expect(backoffMs(1)).toBe(1000);
    expect(backoffMs(3)).toBe(4000);
    expect(backoffMs(10)).toBe(60_000);
    expect(backoffMs(1, 30_000)).toBe(30_000);
    expect(backoffMs(1, 10 * 3_600_000)).toBe(300_000);
  });

  it('gives up after max attempts, and never retries a 4xx', async () => {
    receiver.script = [500, 500, 500, 500, 400];
    const q = queue({ maxAttempts: 4 });
    q.push(ev('a'));
    for (let n = 1; n < 4; n++) {
      await receiver.waitFor(n);
      await until(() => clock.nextWakeAt() !== undefined, `backoff ${n}`);
      await clock.advance(clock.nextWakeAt()! - clock.now());
    }
    await q.idle();
    expect(receiver.received).toHaveLength(4);
    q.push(ev('b', 'fatal'));
    await q.idle();
    expect(receiver.received.map((r) => r.status)).toEqual([500, 500, 500, 500, 400]);
    expect(clock.nextWakeAt()).toBeUndefined();
    expect(await counts()).toEqual({ 'order_confirmed/failed': 1, 'fatal/failed': 1 });
  });

  it('retries a timeout', async () => {
    receiver.hold = true;
    const q = queue({ timeoutMs: 200 });
    q.push(ev('a'));
    await until(() => clock.nextWakeAt() !== undefined, 'backoff after the timeout');
    receiver.hold = false;
    await clock.advance(1000);
    await q.idle();
    expect(receiver.received).toHaveLength(2);
    expect(await counts()).toEqual({ 'order_confirmed/sent': 1 });
    expect(sink.text).toContain('"status":"timeout"');
  });

  it('never logs the URL or its token, whatever fails; masks registered secrets in the body', async () => {
    const secrets = new SecretRegistry();
    secrets.add('sk_live_apikey_123456');
    receiver.script = [500, 401];
    const q = queue({ mask: (t) => secrets.mask(t) });
    q.push({ ...ev('a'), summary: 'failed: key sk_live_apikey_123456 refused' });
    await receiver.waitFor(1);
    await until(() => clock.nextWakeAt() !== undefined, 'backoff');
    await clock.advance(1000);
    await q.idle();
    expect(receiver.received[0]!.body.summary).toBe('failed: key [REDACTED] refused');
    // A receiver that is not there: a transport error (undici's message can carry the URL).
    const gone = queue({ maxAttempts: 1 }, `http://127.0.0.1:1/hook/${TOKEN}`);
    gone.push(ev('b'));
    await gone.idle();
    expect(await counts()).toEqual({ 'order_confirmed/failed': 2 });
    expect(sink.lines.length).toBeGreaterThan(3);
    expect(sink.text).not.toContain(TOKEN);
    expect(sink.text).not.toContain('/hook');
    expect(sink.text).toContain('"webhook":"ops"');
  });
});
