/**
 * One webhook's delivery: a bounded queue drained by one worker, so a slow or dead receiver never
 * holds up trading (pushing returns at once) and events reach it in order.
 *
 * - Bounded: when `queueSize` events wait, the OLDEST is dropped for the new one (the latest state
 *   matters most: a fatal stop or a pause outranks an old order confirmation); counted `dropped`.
 * - At most once per id: an id is remembered when accepted (the last `MAX_REMEMBERED` ids), so an
 *   event raised twice (a replay, a re-check) is queued once, and never sent again after it failed.
 * - Retries: a 5xx, a 429 (after its Retry-After, capped) or no answer (timeout, reset) is tried
 *   again after a backoff on the injected clock (1 s, 2 s, 4 s … capped at 60 s), up to
 *   `maxAttempts` in all; any other status (4xx: the request is wrong) fails at once.
 * - Secrets: the URL is used only for the request. Logs name the webhook and the event kind, and an
 *   error by its code, never its message (an undici message can quote the URL).
 */
import { Agent } from '../../api/undici-agent.js';
import type { NotifyFormat, WebhookConfig } from '../../config/notify-config.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { NotifyEvent } from './event.js';
import { formatBody } from './format.js';

const MAX_REMEMBERED = 10_000;
const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 60_000;
const RETRY_AFTER_CAP_MS = 300_000;

export interface WebhookQueueOptions {
  webhook: Pick<WebhookConfig, 'name' | 'format' | 'chatId' | 'url'>;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  queueSize: number;
  /** Per attempt, wall time (like the API client's timeouts). */
  timeoutMs: number;
  maxAttempts: number;
  /** Masks registered secrets in the body (the API key must never reach a third party). */
  mask?: (text: string) => string;
  agent?: Agent;
}

export type Attempt =
  | { ok: true; status: number }
  | { ok: false; retry: boolean; status: number | 'timeout' | 'transport'; retryAfterMs?: number };

/** Backoff before attempt `n + 1` after attempt `n` failed (n ≥ 1). */
export function backoffMs(n: number, retryAfterMs?: number): number {
  const exp = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (n - 1));
  return retryAfterMs === undefined ? exp : Math.max(exp, Math.min(retryAfterMs, RETRY_AFTER_CAP_MS));
}

/** Whether a status (or no answer) is worth another attempt. */
function retryable(status: number | 'timeout' | 'transport'): boolean {
  return typeof status !== 'number' || status === 429 || status >= 500;
}

function retryAfter(header: string | null): number | undefined {
  if (header === null) return undefined;
  const s = Number(header);
  return Number.isFinite(s) && s >= 0 ? s * 1000 : undefined;
}

function errorCode(e: unknown): string {
  const cause = (e as { cause?: { code?: unknown } }).cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  const name = (e as { name?: unknown }).name;
  return typeof name === 'string' ? name : 'Error';
}

export class WebhookQueue {
  private readonly queue: NotifyEvent[] = [];
  private readonly seen = new Set<string>();
  private worker: Promise<void> = Promise.resolve();
  private running = false;
  private closing = false;
  /** Aborts backoff sleeps (closing: no more retries). */
  private readonly noRetries = new AbortController();
  /** Aborts requests in flight (the shutdown grace is over). */
  private readonly hardStop = new AbortController();
  private readonly agent: Agent;
  private readonly ownAgent: boolean;

  constructor(private readonly o: WebhookQueueOptions) {
    this.ownAgent = o.agent === undefined;
    this.agent = o.agent ?? new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  }

  get name(): string {
    return this.o.webhook.name;
  }

  get format(): NotifyFormat {
    return this.o.webhook.format;
  }

  /** Events waiting (not counting one in flight). */
  get pending(): number {
    return this.queue.length;
  }

  /** Accepts an event; false when its id was seen before (or the queue is closed). Never blocks. */
  push(event: NotifyEvent): boolean {
    if (this.closing) {
      this.o.metrics.notification(event.event, 'dropped');
      return false;
    }
    if (this.seen.has(event.id)) return false;
    this.seen.add(event.id);
    if (this.seen.size > MAX_REMEMBERED) this.seen.delete(this.seen.values().next().value as string);
    if (this.queue.length >= this.o.queueSize) {
      const old = this.queue.shift()!;
      this.o.metrics.notification(old.event, 'dropped');
      this.o.log.warn(
        { webhook: this.name, event: old.event },
        'notification queue full: dropped the oldest',
      );
    }
    this.queue.push(event);
    if (!this.running) {
      this.running = true;
      this.worker = this.drain();
    }
    return true;
  }

  /** Resolves when the queue is empty and nothing is in flight. */
  async idle(): Promise<void> {
    while (this.running) await this.worker;
  }

  /**
   * No more events or retries; what is queued gets one attempt each within `graceMs` (wall time),
   * then requests in flight are aborted and what is left is counted `dropped`.
   */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    this.noRetries.abort();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((r) => {
      timer = setTimeout(r, graceMs);
    });
    await Promise.race([this.idle(), grace]);
    clearTimeout(timer);
    this.hardStop.abort();
    for (const e of this.queue.splice(0)) this.o.metrics.notification(e.event, 'dropped');
    await this.idle();
    if (this.ownAgent) await this.agent.close().catch(() => undefined);
  }

  /** The worker; `running` turns false in the same step that finds the queue empty. */
  private async drain(): Promise<void> {
    try {
      for (let e = this.queue.shift(); e; e = this.queue.shift()) {
        if (this.hardStop.signal.aborted) this.o.metrics.notification(e.event, 'dropped');
        else await this.deliver(e);
      }
    } finally {
      this.running = false;
    }
  }

  private async deliver(event: NotifyEvent): Promise<void> {
    const { log, metrics, maxAttempts, clock } = this.o;
    const body = this.body(event);
    for (let n = 1; ; n++) {
      const r = await this.attempt(body);
      if (r.ok) {
        metrics.notification(event.event, 'sent');
        log.debug({ webhook: this.name, event: event.event, attempts: n }, 'notification sent');
        return;
      }
      const last = !r.retry || n >= maxAttempts || this.closing;
      if (last) {
        metrics.notification(event.event, 'failed');
        log.warn(
          { webhook: this.name, event: event.event, status: r.status, attempts: n },
          'notification not delivered',
        );
        return;
      }
      const wait = backoffMs(n, r.retryAfterMs);
      log.info(
        { webhook: this.name, event: event.event, status: r.status, attempt: n, retry_in_ms: wait },
        'notification refused, will retry',
      );
      try {
        await clock.sleep(wait, this.noRetries.signal);
      } catch {
        metrics.notification(event.event, 'failed');
        log.warn(
          { webhook: this.name, event: event.event, attempts: n },
          'notification not retried: stopping',
        );
        return;
      }
    }
  }

  private body(event: NotifyEvent): string {
    const text = JSON.stringify(formatBody(this.o.webhook.format, event, this.o.webhook.chatId));
    return this.o.mask ? this.o.mask(text) : text;
  }

  /** One POST; never throws. */
  async attempt(body: string): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.o.timeoutMs);
    try {
      const init = {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'packbot' },
        body,
        signal: AbortSignal.any([timeout, this.hardStop.signal]),
        dispatcher: this.agent,
      };
      // The cast: undici 7's Agent and the undici bundled in Node's fetch types differ, not at runtime.
      const res = await fetch(this.o.webhook.url(), init as unknown as RequestInit);
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
      const after = res.status === 429 ? retryAfter(res.headers.get('retry-after')) : undefined;
      return {
        ok: false,
        retry: retryable(res.status),
        status: res.status,
        ...(after !== undefined ? { retryAfterMs: after } : {}),
      };
    } catch (e) {
      const status = timeout.aborted ? 'timeout' : 'transport';
      if (status === 'transport')
        this.o.log.debug({ webhook: this.name, error: errorCode(e) }, 'notification request failed');
      return { ok: false, retry: true, status };
    }
  }
}
