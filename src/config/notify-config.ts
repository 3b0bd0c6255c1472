/**
 * The `notify` section of the bot config: webhooks the bot posts events to (docs/operations.md).
 * A webhook URL often carries a token (Discord, Slack, Telegram), so it is treated like a key: best
 * read from an environment variable (`url_env`), exposed only through a non-enumerable `url()`
 * closure, registered with the logger's secret masking, and named in logs by its name only.
 */
import { z } from 'zod';

export const NOTIFY_EVENTS = [
  'order_confirmed',
  'order_failed',
  'order_in_doubt',
  'big_pull',
  'window_missed',
  'paused',
  'resumed',
  'stop_loss',
  'fatal',
  'daily_summary',
  'model_drift',
] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

export const NOTIFY_FORMATS = ['json', 'discord', 'slack', 'telegram'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const WebhookFile = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'must be 1-32 characters of a-z 0-9 _ -')
      .optional()
      .describe('how logs name this webhook (default: webhooks[i]); never the URL'),
    url: HttpUrl.optional().describe('the URL itself (only for one without a token in it)'),
    url_env: EnvName.optional().describe('environment variable holding the URL (use this for secret URLs)'),
    format: z.enum(NOTIFY_FORMATS, { error: `must be one of ${NOTIFY_FORMATS.join(', ')}` }),
    chat_id: z
      .union([z.string().min(1), z.number().int()])
      .optional()
      .describe('telegram only: the chat the bot posts to'),
    events: z
      .array(z.enum(NOTIFY_EVENTS, { error: `must be one of ${NOTIFY_EVENTS.join(', ')}` }))
      .min(1, 'at least one event is required'),
  })
  .superRefine((w, ctx) => {
    if ((w.url === undefined) === (w.url_env === undefined))
      ctx.addIssue({
        code: 'custom',
        path: w.url === undefined ? [] : ['url_env'],
        message: 'exactly one of url and url_env is required',
      });
    if (w.format === 'telegram' && w.chat_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['format'], message: 'telegram needs chat_id' });
    if (w.format !== 'telegram' && w.chat_id !== undefined)
      ctx.addIssue({ code: 'custom', path: ['chat_id'], message: 'chat_id is for the telegram format only' });
  });

export const NotifyFile = z.strictObject({
  enabled: z.boolean().default(true),
  big_pull_multiple: z
    .number()
    .min(1)
    .max(10_000)
    .default(10)
    .describe('a pull worth at least this many times its pack price is a big_pull'),
  queue_size: z.number().int().min(1).max(10_000).default(100).describe('events queued per webhook'),
  timeout_seconds: z.number().int().min(1).max(60).default(10),
  max_attempts: z.number().int().min(1).max(10).default(5),
  webhooks: z.array(WebhookFile).min(1, 'at least one webhook is required'),
});
export type NotifyFile = z.infer<typeof NotifyFile>;

export interface WebhookConfig {
  /** How logs and errors name it: its `name`, or `webhooks[i]`. */
  readonly name: string;
  readonly format: NotifyFormat;
  readonly events: readonly NotifyEventName[];
  readonly chatId: string | number | undefined;
  readonly urlEnv: string | undefined;
  /** The URL. Non-enumerable: never serialised with the config. */
  readonly url: () => string;
}

export interface NotifyConfig {
  readonly bigPullMultiple: number;
  readonly queueSize: number;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly webhooks: readonly WebhookConfig[];
}

export type IssueAt = (at: PropertyKey[], message: string) => void;

/**
 * The validated section resolved against the environment; undefined when absent or disabled. A URL
 * variable that is unset or not an http(s) URL is an issue at its `url_env` (its value never shown).
 */
export function resolveNotify(
  raw: NotifyFile | undefined,
  env: NodeJS.ProcessEnv,
  issue: IssueAt,
  ignoreEnv = false,
): NotifyConfig | undefined {
  if (!raw?.enabled) return undefined;
  const webhooks = raw.webhooks.map((w, i): WebhookConfig => {
    let url = w.url ?? '';
    if (w.url_env !== undefined) {
      const value = env[w.url_env]?.trim() ?? '';
      if (value !== '' && HttpUrl.safeParse(value).success) url = value;
      else if (!ignoreEnv)
        issue(
          ['notify', 'webhooks', i, 'url_env'],
          value === ''
            ? `environment variable ${w.url_env} is not set (the URL of this webhook)`
            : `environment variable ${w.url_env} does not hold an http(s) URL`,
        );
    }
    const hook = {
      name: w.name ?? `webhooks[${i}]`,
      format: w.format,
      events: [...new Set(w.events)],
      chatId: w.chat_id,
      urlEnv: w.url_env,
    };
    Object.defineProperty(hook, 'url', { value: () => url, enumerable: false });
    return hook as unknown as WebhookConfig;
  });
  return {
    bigPullMultiple: raw.big_pull_multiple,
    queueSize: raw.queue_size,
    timeoutMs: raw.timeout_seconds * 1000,
    maxAttempts: raw.max_attempts,
    webhooks,
  };
}

/**
 * What of a webhook URL to mask in logs: the whole URL, and every path segment or query value long
 * enough to be a token (a Telegram bot token sits in the path, a Slack one in the last segments).
 */
export function urlSecrets(url: string): string[] {
  if (url === '') return [];
  const out = [url];
  try {
    const u = new URL(url);
    for (const seg of u.pathname.split('/')) if (seg.length >= 16) out.push(decodeURIComponent(seg), seg);
    for (const v of u.searchParams.values()) if (v.length >= 16) out.push(v);
  } catch {
    // validated as a URL already; nothing more to mask
  }
  return out;
}
