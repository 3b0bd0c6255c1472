/**
 * What the bot tells an operator, and the one seam it tells it through. The bot builds events
 * (src/bot/common/notices.ts) and hands them to a `Notifier`; it knows nothing of webhooks or HTTP.
 */
import type { NotifyEventName } from '../../config/notify-config.js';

export type { NotifyEventName } from '../../config/notify-config.js';

export interface NotifyEvent {
  /**
   * Identifies the occurrence, not the message: the same id is delivered at most once per webhook
   * (e.g. `order_confirmed:<order key>`, `daily_summary:main:2026-01-05`).
   */
  id: string;
  event: NotifyEventName;
  /** The account it concerns; null for the whole process (pause, resume, fatal). */
  account: string | null;
  /** Epoch ms on the injected clock. */
  at: number;
  /** One human-readable line (what chat formats show). */
  summary: string;
  /** Machine-readable details: money in integer cents (`*_cents`), times as ISO strings. */
  data: Record<string, string | number | boolean | null | readonly string[]>;
}

export interface Notifier {
  /** Queues the event for every webhook subscribed to its kind; returns at once, never throws. */
  notify(event: NotifyEvent): void;
  /** Whether any webhook wants this kind (skip building costly events nobody reads). */
  wants(event: NotifyEventName): boolean;
  /** A pull worth at least this many times its pack price is a `big_pull`. */
  readonly bigPullMultiple: number;
  /** Stops accepting events; sends what is queued within a short grace, drops the rest. */
  close(): Promise<void>;
}

/** Notifications not configured: every call does nothing. */
export const NO_NOTIFIER: Notifier = Object.freeze({
  notify: () => undefined,
  wants: () => false,
  bigPullMultiple: Number.POSITIVE_INFINITY,
  close: async () => undefined,
});
