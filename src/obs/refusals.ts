/**
 * Requests the bot's HTTP server refuses (a foreign `Host`, a missing or wrong token). Any web page
 * the operator opens can send them by the hundred, so each is counted
 * (`packbot_http_refused_total{reason}`) but logged at most once a minute per reason, with how many
 * went unlogged since the last line.
 */
import type { Logger } from './logger.js';
import type { Metrics, HttpRefusalReason as RefusalReason } from './metrics.js';

export type { RefusalReason };

export const REFUSAL_LOG_INTERVAL_MS = 60_000;

const MESSAGE: Record<RefusalReason, string> = {
  host: 'request refused: Host not allowed (metrics.allowed_hosts)',
  token: 'request refused: bad or missing bearer token',
  no_token: 'request refused: the read API needs a token beyond loopback (control.token_env)',
};

export class RefusalLog {
  private readonly lastAt = new Map<RefusalReason, number>();
  private readonly unlogged = new Map<RefusalReason, number>();

  constructor(
    private readonly o: { logger?: Logger | undefined; metrics?: Metrics | undefined; now: () => number },
  ) {}

  refused(reason: RefusalReason, route: string, host?: string): void {
    this.o.metrics?.httpRefused(reason);
    const now = this.o.now();
    const last = this.lastAt.get(reason);
    if (last !== undefined && now - last < REFUSAL_LOG_INTERVAL_MS) {
      this.unlogged.set(reason, (this.unlogged.get(reason) ?? 0) + 1);
      return;
    }
    this.lastAt.set(reason, now);
    const suppressed = this.unlogged.get(reason) ?? 0;
    this.unlogged.set(reason, 0);
    // The Host is the requester's text: cut short, never a token.
    this.o.logger?.warn(
      {
        reason,
        route: route.slice(0, 200),
        ...(host !== undefined ? { host: host.slice(0, 100) } : {}),
        ...(suppressed > 0 ? { not_logged_since_last: suppressed } : {}),
      },
      MESSAGE[reason],
    );
  }
}
