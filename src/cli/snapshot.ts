/**
 * `packbot snapshot`: records pools and account into a snapshot file, from the API the config
 * points at (or, with `api.base_url: embedded`, from a simulator started in-process).
 */
import { createHttpClient } from '../api/client.js';
import { CATEGORIES, type Category } from '../api/schemas.js';
import { takeSnapshot, writeSnapshot } from '../backtest/snapshot.js';
import { loadBotConfig } from '../config/bot-config.js';
import { loadWorld } from '../config/world-file.js';
import { WallClock } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import { Market } from '../market/market.js';
import { startSimServer } from '../market/server.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';

export const command: Command = {
  summary: 'record pools and account into a snapshot file',
  usage: 'packbot snapshot --out F [--config config/bot.yaml] [--categories a,b]',
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      { out: { type: 'string' }, config: { type: 'string' }, categories: { type: 'string' } },
      'snapshot',
    );
    if (positionals.length > 0) throw new UsageError(`snapshot: unexpected argument '${positionals[0]}'`);
    if (!values.out) throw new UsageError('snapshot: --out F is required');
    let categories: Category[] | undefined;
    if (values.categories !== undefined) {
      categories = values.categories.split(',').map((c) => c.trim()) as Category[];
      for (const c of categories)
        if (!(CATEGORIES as readonly string[]).includes(c))
          throw new UsageError(`--categories: unknown category '${c}' (one of ${CATEGORIES.join(', ')})`);
    }
    const config = loadBotConfig(values.config ?? 'config/bot.yaml');
    const account = config.accounts[0];
    if (!account) throw new UsageError(`${config.file}: accounts: at least one account is needed`);
    const clock = new WallClock();
    let baseUrl = config.api.baseUrl;
    let stop: (() => Promise<void>) | undefined;
    if (config.api.embedded) {
      const world = config.sim.worldPath ? loadWorld(config.sim.worldPath) : loadWorld();
      const server = await startSimServer({
        market: new Market(world, { clock, seed: config.sim.seed }),
        clock,
      });
      baseUrl = server.url;
      stop = () => server.close();
    }
    try {
      const api = createHttpClient({ baseUrl, apiKey: account.apiKey(), clock });
      const tty = process.stderr.isTTY === true;
      const snap = await takeSnapshot(api, {
        clock,
        source: config.api.embedded ? 'embedded' : config.api.baseUrl,
        ...(categories ? { categories } : {}),
        onProgress: (done, total, what) => {
          if (tty) process.stderr.write(`\r\x1b[K${done}/${total} ${what}`);
        },
      });
      if (tty) process.stderr.write('\r\x1b[K');
      writeSnapshot(values.out, snap);
      process.stdout.write(
        `wrote ${values.out}: ${snap.pools.length} pools, account ${snap.account ? snap.account.username : 'not readable with this key'}\n`,
      );
      return 0;
    } finally {
      await stop?.();
    }
  },
};
