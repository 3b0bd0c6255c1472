/**
 * The API a command reads through: the configured service, or, with `api.base_url: embedded`, a
 * simulator started in-process for the command's duration. Reads are paced by the client.
 */
import { createHttpClient, type HttpPartnerApi } from '../api/client.js';
import { startEmbedded } from '../bot/embedded.js';
import type { BotConfig } from '../config/bot-config.js';
import { clientOptions } from '../config/client-options.js';
import type { Clock } from '../core/clock.js';
import { UsageError } from '../core/errors.js';

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
    // A fresh world on the command's own clock (record and calibrate watch it move), never the
    // bot's saved state.
    const { server } = await startEmbedded(clock, {
      worldPath: config.sim.worldPath,
      ...(config.sim.world ? { world: config.sim.world } : {}),
      seed: config.sim.seed,
    });
    baseUrl = server.url;
    close = () => server.close();
  }
  const api = createHttpClient(clientOptions(config, account, clock, baseUrl));
  return { api, source: config.api.embedded ? 'embedded' : config.api.baseUrl, close };
}
