/**
 * Embedded mode: the simulator in-process on a free loopback port, reached over real HTTP by the
 * normal client, so `npm start` exercises exactly the code that trades live.
 */
import type { Clock } from '../core/clock.js';
import { Market } from '../market/market.js';
import { type SimServer, startSimServer } from '../market/server.js';
import { DEFAULT_WORLD_PATH, loadWorld } from '../market/world.js';
import type { Logger } from '../obs/logger.js';
import type { Ledger } from '../store/ledger.js';

export interface Embedded {
  market: Market;
  server: SimServer;
}

export async function startEmbedded(
  clock: Clock,
  options: { worldPath?: string | undefined; seed: number; onError?: (err: unknown) => void },
): Promise<Embedded> {
  const world = loadWorld(options.worldPath ?? DEFAULT_WORLD_PATH);
  const market = new Market(world, { clock, seed: options.seed });
  const server = await startSimServer({
    market,
    clock,
    host: '127.0.0.1',
    port: 0,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  return { market, server };
}

/**
 * The embedded simulator keeps its state in memory, so a restart meets a brand-new service while
 * the ledger remembers the previous one. What the old simulator held cannot be traded any more:
 * unresolved orders are closed as failed (re-sending them would place new orders), holdings and
 * listings are written off, and all of it is logged. Returns a seed offset so the new session's
 * ids never collide with ids the ledger already has.
 */
export function closePreviousEmbeddedSession(ledger: Ledger, log: Logger): number {
  const counts = ledger.intentCounts();
  const previous = Object.values(counts).reduce((a, b) => a + b, 0);
  let closed = 0;
  for (const intent of ledger.unresolvedIntents()) {
    ledger.failIntent(intent.key, 'SIM_RESTARTED', 'the embedded simulator restarted; its orders are gone');
    closed++;
  }
  for (const listing of ledger.activeListings())
    ledger.recordListingUpdate(listing.listingId, { delisted: true });
  let written = 0;
  for (const pull of ledger.holdings()) {
    ledger.markPullGone(pull.pullId, 'gone');
    written++;
  }
  if (closed + written > 0)
    log.warn(
      { orders: closed, holdings: written },
      'embedded simulator state does not survive a restart: previous session closed in the ledger',
    );
  return previous;
}
