/**
 * How a validated config's `api` section becomes the HTTP client's options: one reading for the
 * bot and for every command that talks to the service (score, the operator's commands), so that
 * `api.timeout_seconds` and `api.max_response_mb` hold for all of them alike.
 */
import type { HttpClientOptions } from '../api/client.js';
import type { Clock } from '../core/clock.js';
import type { AccountConfig, BotConfig } from './bot-config.js';

/**
 * `account`'s client options against `baseUrl` (default: the configured one; an embedded
 * simulator's URL once it listens). `api.timeout_seconds` bounds both the wait for the answer's
 * headers and the whole attempt.
 */
export function clientOptions(
  config: BotConfig,
  account: AccountConfig,
  clock: Clock,
  baseUrl: string = config.api.baseUrl,
): HttpClientOptions {
  return {
    baseUrl,
    apiKey: account.apiKey(),
    clock,
    timeouts: { requestMs: config.api.timeoutMs, headersMs: config.api.timeoutMs },
    maxResponseBytes: config.api.maxResponseBytes,
  };
}
