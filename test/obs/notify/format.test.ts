/** Each format's minimal body, from one event. */
import { describe, expect, it } from 'vitest';
import type { NotifyEvent } from '../../../src/obs/notify/event.js';
import { eventText, formatBody } from '../../../src/obs/notify/format.js';

const EVENT: NotifyEvent = {
  id: 'order_confirmed:k1',
  event: 'order_confirmed',
  account: 'main',
  at: Date.UTC(2026, 0, 5, 8, 0, 0),
  summary: 'opened 3 × lucky (pokemon, standard) for $30.00; pulls worth $41.20',
  data: { order_key: 'k1', charged_cents: 3000 },
};
const LINE =
  'packbot order_confirmed [main]: opened 3 × lucky (pokemon, standard) for $30.00; pulls worth $41.20';

describe('notification formats', () => {
  it.each([
    [
      'json',
      {
        id: 'order_confirmed:k1',
        event: 'order_confirmed',
        account: 'main',
        at: '2026-01-05T08:00:00.000Z',
        summary: EVENT.summary,
        data: { order_key: 'k1', charged_cents: 3000 },
      },
    ],
    ['discord', { content: LINE }],
    ['slack', { text: LINE }],
    ['telegram', { chat_id: '-100123', text: LINE }],
  ] as const)('%s', (format, body) => {
    expect(formatBody(format, EVENT, format === 'telegram' ? '-100123' : undefined)).toEqual(body);
  });

  it('a process-wide event has no account in its line; chat bodies are clipped to the limit', () => {
    expect(eventText({ ...EVENT, event: 'paused', account: null, summary: 'x' })).toBe('packbot paused: x');
    const long = { ...EVENT, summary: 'y'.repeat(5000) };
    expect((formatBody('discord', long).content as string).length).toBe(2000);
    expect((formatBody('telegram', long, 1).text as string).length).toBe(4096);
    expect((formatBody('discord', long).content as string).endsWith('…')).toBe(true);
  });
});
