/**
 * What every per-account part of the runner (scheduler, sell side, listing watch, reconciler)
 * is built with: one account's API, ledger, clock, logger, metrics and strategy, and where to tell
 * an operator what happened (a no-op when notifications are not configured).
 */
import type { PartnerApi } from '../../api/partner-api.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../obs/logger.js';
import type { Metrics } from '../../obs/metrics.js';
import type { Notifier } from '../../obs/notify/event.js';
import type { Ledger } from '../../store/ledger.js';
import type { Strategy } from '../../strategy/strategy-schema.js';

export interface AccountContext {
  account: string;
  api: PartnerApi;
  ledger: Ledger;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  strategy: Strategy;
  notifier?: Notifier;
}
