/**
 * The fault proxy: a loopback HTTP server in front of the simulator that the bot talks to. It
 * passes everything through, and can (per round) play two servers the simulator cannot be:
 * one that forgets idempotency keys, and one whose pool of a pack type lies that the price is 0.
 * It also watches every purchase answer so the audit can tie each charge to the bot's original key,
 * even when the bot never saw the answer.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_PREFIX } from '../src/api/partner-api.js';
import { Rng } from '../src/core/prng.js';

export interface ProxyModes {
  /** A purchase re-sent with a key already forwarded goes out under a fresh key. */
  forgetKeys: boolean;
  /** Share of purchase answers the proxy swallows after the order committed (cuts the socket). */
  dropAfterRate: number;
  /** `GET /catalog/packs/pool` of this pack type answers `price: 0`. */
  zeroPricePack: string | null;
}

export const NO_MODES: ProxyModes = { forgetKeys: false, dropAfterRate: 0, zeroPricePack: null };

/** One purchase answer the proxy saw: which original key it belongs to and what it handed out. */
export interface SeenCharge {
  checkoutId: string;
  originalKey: string;
  sentKey: string;
  pullIds: string[];
}

export interface FaultProxy {
  url: string;
  setModes(modes: ProxyModes): void;
  /** checkout id → what the proxy saw of it (replays of one order map to the same entry). */
  readonly charges: Map<string, SeenCharge>;
  /** Purchases forwarded under a fresh key because the key had been forwarded before. */
  readonly rekeyed: number;
  /** The bot's key behind a key the simulator saw (itself when it was not re-keyed). */
  originalKeyOf(sentKey: string): string;
  /**
   * Holds the `nth` card purchase from now on while `onHeld` runs (the harness kills the bot with
   * the request on the wire), then forwards it to the simulator when `onHeld` says so, else drops
   * it. Undone by `setModes`.
   */
  holdCardPurchase(nth: number, onHeld: () => Promise<boolean>): void;
  close(): Promise<void>;
}

const PURCHASE = `${API_PREFIX}/packs/purchase`;
const CARD_PURCHASE = `${API_PREFIX}/cards/purchase`;
const POOL = `${API_PREFIX}/catalog/packs/pool`;

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

function parse(buf: Buffer): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(buf.toString('utf8'));
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export async function startFaultProxy(upstream: string, seed: number): Promise<FaultProxy> {
  const target = new URL(upstream);
  const rng = new Rng(seed ^ 0x9a0c7);
  let modes: ProxyModes = { ...NO_MODES };
  const forwarded = new Set<string>();
  const originalOf = new Map<string, string>();
  const charges = new Map<string, SeenCharge>();
  let rekeyed = 0;
  let fresh = 0;
  let hold: { nth: number; seen: number; onHeld: () => Promise<boolean> } | undefined;

  function forward(
    req: IncomingMessage,
    body: Buffer,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  } | null> {
    return new Promise((resolve) => {
      const up = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...headers, host: target.host, 'content-length': String(body.length) },
        },
        (res) => {
          readAll(res).then(
            (b) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: b }),
            () => resolve(null),
          );
        },
      );
      // The simulator cut the connection (its own drop faults): the bot must see the same.
      up.on('error', () => resolve(null));
      up.end(body);
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    const path = new URL(req.url ?? '/', 'http://proxy').pathname.replace(/\/+$/, '');
    const headers = { ...req.headers };
    if (hold && req.method === 'POST' && path === CARD_PURCHASE && ++hold.seen === hold.nth) {
      const { onHeld } = hold;
      hold = undefined;
      if (!(await onHeld())) {
        req.socket.destroy();
        return;
      }
    }
    const isPurchase = req.method === 'POST' && path === PURCHASE;
    let originalKey: string | undefined;
    let sentKey: string | undefined;
    if (isPurchase && typeof headers['idempotency-key'] === 'string') {
      originalKey = headers['idempotency-key'];
      sentKey = originalKey;
      if (modes.forgetKeys && forwarded.has(originalKey)) {
        // Stays within the key grammar (A-Za-z0-9_-, at most 128) so the server accepts it.
        sentKey = `${originalKey.slice(0, 100)}_fk${++fresh}`;
        rekeyed++;
        headers['idempotency-key'] = sentKey;
      }
      forwarded.add(originalKey);
      originalOf.set(sentKey, originalKey);
    }
    const answer = await forward(req, body, headers);
    if (!answer) {
      req.socket.destroy();
      return;
    }
    let out = answer.body;
    if (isPurchase && answer.status === 200 && originalKey && sentKey) {
      const json = parse(out);
      if (typeof json?.checkout_id === 'string' && !charges.has(json.checkout_id)) {
        const pulls = Array.isArray(json.pulls) ? (json.pulls as Record<string, unknown>[]) : [];
        charges.set(json.checkout_id, {
          checkoutId: json.checkout_id,
          originalKey,
          sentKey,
          pullIds: pulls.map((p) => String(p.pull_id)),
        });
      }
      if (modes.dropAfterRate > 0 && rng.next() < modes.dropAfterRate) {
        req.socket.destroy();
        return;
      }
    }
    if (req.method === 'GET' && path === POOL && answer.status === 200 && modes.zeroPricePack) {
      const json = parse(out);
      if (json && json.pack_type === modes.zeroPricePack)
        out = Buffer.from(JSON.stringify({ ...json, price: 0 }));
    }
    const h = { ...answer.headers };
    delete h['content-length'];
    delete h['transfer-encoding'];
    delete h.connection;
    delete h['keep-alive'];
    res.writeHead(answer.status, { ...h, 'content-length': String(out.length) });
    res.end(out);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    setModes(m) {
      modes = { ...m };
      hold = undefined;
    },
    holdCardPurchase(nth, onHeld) {
      hold = { nth, seen: 0, onHeld };
    },
    charges,
    get rekeyed() {
      return rekeyed;
    },
    originalKeyOf: (sentKey) => originalOf.get(sentKey) ?? sentKey,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
