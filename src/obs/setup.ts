/**
 * Wires logging, metrics, the kill switch and the operations server from a loaded BotConfig, in the
 * order that keeps secrets safe: every key and token is registered with the log guard before the
 * first line is written.
 */
import type { BotConfig } from '../config/bot-config.js';
import type { Clock } from '../core/clock.js';
import { endpointPauseFile, KillSwitch } from './kill-switch.js';
import { createLogger, type Logger, SecretRegistry } from './logger.js';
import { Metrics } from './metrics.js';
import { type ObsServer, type ReadinessResult, startObsServer } from './server.js';

export interface Observability {
  logger: Logger;
  metrics: Metrics;
  secrets: SecretRegistry;
  killSwitch: KillSwitch;
  /** Undefined when `metrics.enabled` is false. */
  server: ObsServer | undefined;
  close(): Promise<void>;
}

export interface ObservabilityOptions {
  config: BotConfig;
  clock: Clock;
  ready: () => Promise<ReadinessResult> | ReadinessResult;
  /** Overrides for tests. */
  destination?: NodeJS.WritableStream;
  port?: number;
}

export async function startObservability(options: ObservabilityOptions): Promise<Observability> {
  const { config, clock } = options;
  const secrets = new SecretRegistry();
  secrets.add(...config.secrets());
  const logger = createLogger({
    level: config.log.level,
    pretty: config.log.pretty,
    secrets,
    now: () => clock.now(),
    ...(options.destination ? { destination: options.destination } : {}),
  });
  const metrics = new Metrics();
  const killSwitch = new KillSwitch(
    config.control.killSwitchFile,
    () => clock.now(),
    (s) => metrics.killSwitch(s),
    { stateFile: endpointPauseFile(config.store.path) },
  );
  killSwitch.status();
  const token = config.control.token();
  if (config.control.tokenEnv && !token)
    logger.warn(
      { variable: config.control.tokenEnv },
      'control token variable is unset: /control/pause is disabled',
    );
  const server = config.metrics.enabled
    ? await startObsServer({
        host: config.metrics.host,
        port: options.port ?? config.metrics.port,
        metrics,
        ready: options.ready,
        killSwitch,
        ...(token ? { controlToken: token } : {}),
        logger,
      })
    : undefined;
  if (server) logger.info({ url: server.url }, 'observability endpoint listening');
  return {
    logger,
    metrics,
    secrets,
    killSwitch,
    server,
    close: async () => {
      await server?.close();
      logger.flush();
    },
  };
}
