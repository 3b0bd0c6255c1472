/**
 * Embedded mode: the simulator in-process on a free loopback port, reached over real HTTP by the
 * normal client, so `npm start` exercises exactly the code that trades live.
 */
import type { Clock } from '../core/clock.js';
import { Market } from '../market/market.js';
import { type SimServer, startSimServer } from '../market/server.js';
import { DEFAULT_WORLD_PATH, loadWorld } from '../market/world.js';

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
