/**
 * `GET /api/v1/events`: server-sent events. The status at once, then every change (new pulls,
 * orders whose state moved, pauses, a changed status) as it is seen; each event's data is a
 * `BotEvent` (api-schemas.ts). A comment line every 15 s keeps proxies from closing it.
 */
import type { ServerResponse } from 'node:http';
import type { BotView } from './bot-view.js';

export const EVENTS_TYPE = 'text/event-stream';

export function streamEvents(res: ServerResponse, view: BotView, pollMs: number): void {
  res.writeHead(200, {
    'Content-Type': EVENTS_TYPE,
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
  });
  const write = (type: string, data: unknown) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  write('status', { type: 'status', status: view.status() });
  let cursor = view.changes(undefined).cursor;
  let beats = 0;
  // Real timers: this paces an IO stream to a browser, not the bot's business timing.
  const timer = setInterval(() => {
    try {
      const c = view.changes(cursor);
      cursor = c.cursor;
      for (const e of c.events) write(e.type, e);
      if (++beats * pollMs >= 15_000) {
        beats = 0;
        res.write(': keep-alive\n\n');
      }
    } catch {
      // The ledger closed under us (shutdown): end the stream; the page reconnects.
      stop();
      res.end();
    }
  }, pollMs);
  timer.unref();
  const stop = () => clearInterval(timer);
  // The response's close (the client went away), not the request's: that one comes as soon as the
  // router has drained the request, which a GET has nothing in.
  res.on('close', stop);
}
