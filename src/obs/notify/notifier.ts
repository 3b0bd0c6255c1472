/**
 * The webhook notifier: fans each event out to the webhooks subscribed to its kind, each with its
 * own bounded queue (webhook-queue.ts), over one undici Agent. Built from the validated config;
 * without a `notify` section the runner uses NO_NOTIFIER.
 */
import { Agent } from '../../api/undici-agent.js';
import type { NotifyConfig } from '../../config/notify-config.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { NO_NOTIFIER, type Notifier, type NotifyEvent, type NotifyEventName } from './event.js';
import { WebhookQueue } from './webhook-queue.js';

export interface NotifierDeps {
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  /** Masks registered secrets (API keys, tokens) in a body before it leaves. */
  mask?: (text: string) => string;
}

/** Shutdown: how long queued events may still take to go out (wall time). */
const CLOSE_GRACE_MS = 5000;

export class WebhookNotifier implements Notifier {
  readonly queues: WebhookQueue[];
  private readonly subscribed: Map<NotifyEventName, WebhookQueue[]>;
  private readonly agent = new Agent({ connections: 2, keepAliveTimeout: 10_000 });

  constructor(
    private readonly config: NotifyConfig,
    deps: NotifierDeps,
  ) {
    this.queues = config.webhooks.map(
      (webhook) =>
        new WebhookQueue({
          webhook,
          clock: deps.clock,
          log: deps.log,
          metrics: deps.metrics,
          queueSize: config.queueSize,
          timeoutMs: config.timeoutMs,
          maxAttempts: config.maxAttempts,
          agent: this.agent,
          ...(deps.mask ? { mask: deps.mask } : {}),
        }),
    );
    this.subscribed = new Map();
    config.webhooks.forEach((w, i) => {
      for (const e of w.events) this.subscribed.set(e, [...(this.subscribed.get(e) ?? []), this.queues[i]!]);
    });
  }

  get bigPullMultiple(): number {
    return this.config.bigPullMultiple;
  }

  wants(event: NotifyEventName): boolean {
    return this.subscribed.has(event);
  }

  notify(event: NotifyEvent): void {
    for (const q of this.subscribed.get(event.event) ?? []) q.push(event);
  }

  /** Every queue empty, nothing in flight (tests). */
  async idle(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.idle()));
  }

  async close(graceMs = Math.min(CLOSE_GRACE_MS, this.config.timeoutMs)): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close(graceMs)));
    await this.agent.close().catch(() => undefined);
  }
}

export function createNotifier(config: NotifyConfig | undefined, deps: NotifierDeps): Notifier {
  if (!config) return NO_NOTIFIER;
  const n = new WebhookNotifier(config, deps);
  deps.log.info(
    { webhooks: config.webhooks.map((w) => ({ name: w.name, format: w.format, events: w.events })) },
    'notifications enabled',
  );
  return n;
}
