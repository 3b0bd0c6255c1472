/**
 * Each webhook format's minimal body, a pure function of the event:
 * - json: `{id, event, account, at, summary, data}` (at: ISO 8601);
 * - discord: `{content}` (an incoming webhook; at most 2000 characters);
 * - slack: `{text}` (an incoming webhook);
 * - telegram: `{chat_id, text}` (the Bot API's sendMessage; at most 4096 characters).
 * Chat formats get one plain-text line: no markup, so nothing in a summary can be misread as it.
 */
import type { NotifyFormat } from '../../config/notify-config.js';
import type { NotifyEvent } from './event.js';

const LIMITS: Record<Exclude<NotifyFormat, 'json'>, number> = { discord: 2000, slack: 4000, telegram: 4096 };

/** The line chat formats show: `packbot order_confirmed [main]: opened 3 × lucky …`. */
export function eventText(e: NotifyEvent): string {
  return `packbot ${e.event}${e.account ? ` [${e.account}]` : ''}: ${e.summary}`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function formatBody(
  format: NotifyFormat,
  e: NotifyEvent,
  chatId?: string | number,
): Record<string, unknown> {
  switch (format) {
    case 'json':
      return {
        id: e.id,
        event: e.event,
        account: e.account,
        at: new Date(e.at).toISOString(),
        summary: e.summary,
        data: e.data,
      };
    case 'discord':
      return { content: clip(eventText(e), LIMITS.discord) };
    case 'slack':
      return { text: clip(eventText(e), LIMITS.slack) };
    case 'telegram':
      return { chat_id: chatId, text: clip(eventText(e), LIMITS.telegram) };
  }
}
