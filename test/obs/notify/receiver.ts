/**
 * A webhook receiver on 127.0.0.1 for tests: records every request (path and parsed JSON body) and
 * answers with the next scripted status (200 once the script is used up). `hold` keeps requests
 * unanswered (a receiver that hangs).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  body: Record<string, unknown>;
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Statuses for the next requests, in order; then 200. */
  script: number[];
  hold: boolean;
  /** Resolves once `n` requests have arrived (answered or held). */
  waitFor(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const waiters: { n: number; resolve: () => void }[] = [];
  const held: ServerResponse[] = [];
  const r: Receiver = {
    url: '',
    received: [],
    script: [],
    hold: false,
    waitFor: (n) =>
      r.received.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      text += c;
    });
    req.on('end', () => {
      const status = r.hold ? 0 : (r.script.shift() ?? 200);
      r.received.push({ path: req.url ?? '', body: JSON.parse(text || '{}'), status });
      for (const w of waiters.filter((x) => r.received.length >= x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      if (r.hold) return void held.push(res);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return r;
}
