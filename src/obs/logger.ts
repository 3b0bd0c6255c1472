/**
 * Structured logs: pino JSON lines (pretty on a terminal). The API key is kept out by
 * configuration, in two independent layers, so no call site has to be careful:
 * 1. `redact` censors every field where a key or token is conventionally carried;
 * 2. a last-step guard rewrites the serialised line, masking any registered secret wherever it
 *    appears (a message, an error text, a URL, a nested field under an unexpected name).
 */
import { createRequire } from 'node:module';
import pino, { type Logger, type LoggerOptions } from 'pino';
import type PinoPretty from 'pino-pretty';

/** pino-pretty is loaded only for a terminal (or `pretty: always`): a service's JSON logs never need it. */
const loadPretty = (): typeof PinoPretty =>
  createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;

export type { Logger } from 'pino';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export const REDACTED = '[REDACTED]';

/**
 * Field paths censored by pino's `redact`, at the top level and one or two levels down. `key` is
 * among them, so log an idempotency key under another name (`intent`).
 */
const SECRET_FIELDS = [
  'apiKey',
  'api_key',
  'key',
  'token',
  'password',
  'secret',
  'authorization',
  'Authorization',
];
const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((f) => `*.${f}`),
  ...SECRET_FIELDS.map((f) => `*.*.${f}`),
  'headers.authorization',
  'headers.Authorization',
  'req.headers.authorization',
  'req.headers.Authorization',
  'request.headers.authorization',
  'request.headers.Authorization',
  'err.headers.authorization',
  'config.headers.authorization',
];

/** Secrets are values, not field names: masked wherever they occur. Shared by every logger. */
export class SecretRegistry {
  private readonly values = new Set<string>();

  /** Registers a secret (ignores short or empty strings, which would mask ordinary text). */
  add(...secrets: (string | undefined)[]): void {
    for (const s of secrets) if (s && s.length >= 6) this.values.add(s);
  }

  /** Replaces every occurrence of a secret (raw or JSON-escaped) with the redaction marker. */
  mask(text: string): string {
    let out = text;
    for (const s of this.values) {
      out = out.replaceAll(s, REDACTED);
      const escaped = JSON.stringify(s).slice(1, -1);
      if (escaped !== s) out = out.replaceAll(escaped, REDACTED);
    }
    return out;
  }

  get size(): number {
    return this.values.size;
  }
}

export interface LoggerConfig {
  level?: LogLevel;
  /** `auto`: pretty when the destination is a TTY. */
  pretty?: 'auto' | 'always' | 'never';
  secrets?: SecretRegistry;
  /** Where lines go (default stdout); tests pass a collecting stream. */
  destination?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Timestamps come from the injected clock (epoch ms), not the system time. */
  now?: () => number;
  name?: string;
}

export function createLogger(config: LoggerConfig = {}): Logger {
  const secrets = config.secrets ?? new SecretRegistry();
  const destination = config.destination ?? process.stdout;
  const isTty = Boolean((destination as { isTTY?: boolean }).isTTY);
  const usePretty = config.pretty === 'always' || ((config.pretty ?? 'auto') === 'auto' && isTty);
  const now = config.now;
  const options: LoggerOptions = {
    level: config.level ?? 'info',
    name: config.name ?? 'packbot',
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    hooks: { streamWrite: (line: string) => secrets.mask(line) },
    serializers: { err: pino.stdSerializers.err },
    ...(now ? { timestamp: () => `,"time":${now()}` } : {}),
  };
  const stream = usePretty
    ? loadPretty()({ colorize: isTty, destination: destination as NodeJS.WritableStream, sync: true })
    : destination;
  return pino(options, stream as pino.DestinationStream);
}
