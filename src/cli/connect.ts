/**
 * The API a command reads through: the configured service, or, with `api.base_url: embedded`, a
 * simulator started in-process for the command's duration. Reads are paced by the client.
 */

import { createHttpClient, type HttpPartnerApi } from '../api/client.js';
import type { BotConfig } from '../config/bot-config.js';
import { clientOptions } from '../config/client-options.js';
import { loadWorld } from '../config/world-file.js';
import type { Clock } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import { Market } from '../market/market.js';
import { startSimServer } from '../market/server.js';

export interface Connection {
  api: HttpPartnerApi;
  /** What the data comes from: the base URL, or "embedded". */
  source: string;
  close(): Promise<void>;
}

export async function connect(config: BotConfig, clock: Clock): Promise<Connection> {
  const account = config.accounts[0];
  if (!account) throw new UsageError(`${config.file}: accounts: at least one account is needed`);
  let baseUrl = config.api.baseUrl;
  let close = async () => {};
  if (config.api.embedded) {
    const world = config.sim.worldPath ? loadWorld(config.sim.worldPath) : loadWorld();
    const server = await startSimServer({
      market: new Market(world, { clock, seed: config.sim.seed }),
      clock,
    });
    baseUrl = server.url;
    close = () => server.close();
  }
  const api = createHttpClient(clientOptions(config, account, clock, baseUrl));
  return { api, source: config.api.embedded ? 'embedded' : config.api.baseUrl, close };
}
