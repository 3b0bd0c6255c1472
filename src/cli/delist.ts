/**
 * `packbot delist --card ID | --all [--yes]`: takes listings off the market; the cards are then
 * held. Through the running bot's control API when it answers (it needs the control token);
 * otherwise directly with the account's key, holding the ledger's writer lock, by the bot's own
 * steps: a `hold` decision recorded first, then the sell side's delisting of every listing whose
 * pull is no longer `listed` (a crash in between is finished by the bot's next start).
 */
import { userInfo } from 'node:os';
import { SellSide } from '../bot/selling/sell-side.js';
import { type BotConfig, loadBotConfig } from '../config/bot-config.js';
import { ScaledClock } from '../core/clock.js';
import { UsageError, UserInputError } from '../core/errors.js';
import { ControlResult } from '../obs/api-schemas.js';
import { createLogger, SecretRegistry } from '../obs/logger.js';
import { Metrics } from '../obs/metrics.js';
import { Ledger } from '../store/ledger.js';
import { acquireWriterLock } from '../store/writer-lock.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import { botPost, botUp, botUrl, controlToken, openPartner } from './ops.js';

const USAGE = `packbot delist (--card ID | --all) [--yes] [--reason TEXT] [--config F] [--json]

  --card ID     the card to take off the market (it is then held: not relisted, not sold)
  --all         every active listing of every account (needs --yes)
  --reason      why (logged and kept in the ledger; default 'packbot delist')

  With the bot running: through its control API (POST /api/v1/control/delist, control token).
  Without: directly with the account's key, taking the ledger's writer lock.`;

type Target = { cardId: string } | { all: true };

async function direct(config: BotConfig, target: Target, by: string, reason: string): Promise<ControlResult> {
  const lock = acquireWriterLock(config.store.path);
  // The ledger's time never runs backwards (an embedded bot's sped-up clock may be ahead of ours).
  const probe = Ledger.open(config.store.path);
  const start = Math.max(Date.now(), probe.latestActivityAt() + 1);
  probe.close();
  const ledger = Ledger.open(config.store.path, { clock: new ScaledClock(start, 1) });
  const secrets = new SecretRegistry();
  secrets.add(...config.secrets());
  const log = createLogger({ level: 'warn', pretty: 'never', destination: process.stderr, secrets });
  const cards: ControlResult['cards'] = [];
  try {
    const listings = ledger
      .activeListings()
      .filter((l) => ('all' in target ? true : l.cardId === target.cardId));
    const why = `operator ${by}: ${reason}`;
    for (const account of config.accounts) {
      const mine = listings.filter((l) => l.account === account.name);
      if (mine.length === 0) continue;
      const partner = await openPartner(config, account, { write: true });
      try {
        // The decision first (the intent), then the requests.
        for (const l of mine)
          if (l.pullId && ledger.getPull(l.pullId)?.status === 'listed')
            ledger.recordDecision({ pullId: l.pullId, action: 'hold', reason: why });
        const clock = { now: () => Date.now(), sleep: async () => undefined };
        const sell = new SellSide({
          account: account.name,
          api: partner.api,
          ledger,
          clock,
          log: log.child({ account: account.name }),
          metrics: new Metrics({ defaultMetrics: false }),
          strategy: account.strategy,
          batchSize: 10,
        });
        await sell.delistUnwanted();
        for (const l of mine) {
          if (!l.pullId) {
            // A listing the ledger holds without its pull (adopted): delisted as it stands.
            await sell.delistQuietly(l.cardId);
            ledger.recordListingUpdate(l.listingId, { delisted: true });
          }
          const state = ledger.getListing(l.listingId)?.state;
          cards.push({
            account: l.account,
            card_id: l.cardId,
            result: state === 'delisted' ? 'delisted' : `still ${state}`,
          });
        }
      } finally {
        await partner.close();
      }
    }
    const done = cards.filter((c) => c.result === 'delisted').length;
    const found = listings.length > 0;
    const message = found
      ? `${done} of ${cards.length} listing(s) delisted; the cards are held`
      : 'cardId' in target
        ? `card ${target.cardId} is not listed`
        : 'nothing listed';
    log.warn({ action: 'delist', by, why: reason, cards }, `control: ${message}`);
    return { action: 'delist', ok: found || 'all' in target, by, reason, message, cards, pause: null };
  } finally {
    ledger.close();
    lock.release();
  }
}

export const command: Command = {
  summary: 'take one listing or all off the market (the cards are held)',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        config: { type: 'string' },
        card: { type: 'string' },
        all: { type: 'boolean' },
        yes: { type: 'boolean' },
        reason: { type: 'string' },
        json: { type: 'boolean' },
      },
      'delist',
    );
    if (positionals.length > 0) throw new UsageError(`delist: unexpected argument '${positionals[0]}'`);
    if ((values.card === undefined) === (values.all !== true))
      throw new UsageError('delist: give exactly one of --card ID or --all');
    if (values.all && !values.yes)
      throw new UsageError('delist --all takes every listing off the market: add --yes');
    const target: Target = values.all ? { all: true } : { cardId: values.card! };
    const reason = values.reason?.trim() || 'packbot delist';
    const config = loadBotConfig(values.config ?? 'config/bot.yaml', process.env);
    let result: ControlResult;
    let via: string;
    if (await botUp(config)) {
      if (!controlToken(config))
        throw new UserInputError(
          `${config.file}: the bot is running at ${botUrl(config)}; delisting goes through its control API, which needs control.token_env set (here and in the bot)`,
        );
      const res = await botPost(config, '/api/v1/control/delist', {
        ...('all' in target ? { all: true } : { card_id: target.cardId }),
        reason,
      });
      if (res.status !== 200 && res.status !== 409)
        throw new Error(`the bot refused: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      result = ControlResult.parse(res.body);
      via = `through the bot at ${botUrl(config)}`;
    } else {
      result = await direct(config, target, `cli:${userInfo().username}`, reason);
      via = 'directly (the bot is not running)';
    }
    if (values.json) process.stdout.write(`${JSON.stringify({ via, ...result }, null, 2)}\n`);
    else {
      const lines = result.cards.map((c) => `  ${c.account}  ${c.card_id}  ${c.result}`);
      process.stdout.write(`${result.message} (${via}).\n${lines.join('\n')}${lines.length ? '\n' : ''}`);
    }
    return result.ok ? 0 : 1;
  },
};
