/**
 * `packbot snapshot`: records pools, shop stock and account into a snapshot file, from the API the
 * config points at (or, with `api.base_url: embedded`, from a simulator started in-process).
 */
import { takeSnapshot, writeSnapshot } from '../backtest/snapshot/snapshot.js';
import { loadBotConfig } from '../config/bot-config.js';
import { WallClock } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import { categoriesFlag, parseFlags } from './args.js';
import type { Command } from './command.js';
import { connect } from './connect.js';

export const command: Command = {
  summary: 'record pools, shop stock and account into a snapshot file',
  usage: 'packbot snapshot --out F [--config config/bot.yaml] [--categories a,b] [--no-shop]',
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        out: { type: 'string' },
        config: { type: 'string' },
        categories: { type: 'string' },
        'no-shop': { type: 'boolean' },
      },
      'snapshot',
    );
    if (positionals.length > 0) throw new UsageError(`snapshot: unexpected argument '${positionals[0]}'`);
    if (!values.out) throw new UsageError('snapshot: --out F is required');
    const categories = categoriesFlag(values.categories);
    const config = loadBotConfig(values.config ?? 'config/bot.yaml');
    const clock = new WallClock();
    const { api, source, close } = await connect(config, clock);
    try {
      const tty = process.stderr.isTTY === true;
      const snap = await takeSnapshot(api, {
        clock,
        source,
        serverNow: () => api.serverNow(),
        shop: values['no-shop'] !== true,
        ...(categories ? { categories } : {}),
        onProgress: (done, total, what) => {
          if (tty) process.stderr.write(`\r\x1b[K${done}/${total} ${what}`);
        },
      });
      if (tty) process.stderr.write('\r\x1b[K');
      writeSnapshot(values.out, snap);
      const shopCards = snap.shop ? `${snap.shop.reduce((n, s) => n + s.cards.length, 0)} shop cards, ` : '';
      process.stdout.write(
        `wrote ${values.out}: ${snap.pools.length} pools, ${shopCards}account ${snap.account ? snap.account.username : 'not readable with this key'}\n`,
      );
      return 0;
    } finally {
      await close();
    }
  },
};
