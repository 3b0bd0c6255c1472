/**
 * The operator's actions on a running bot (`BotControl`, served under `/api/v1/control/`). Each
 * card action is a decision written to the ledger BEFORE any request, under the sell side's lock:
 * `hold` (delist) or `sell_back`, with `operator <who>: <why>` as its reason. The sell side then
 * carries it out (`delistUnwanted`, `flushSells`), and after a crash it finishes the same decision
 * from the ledger: a delisting is repeated at most, a pull is paid once. Pause and resume are the
 * kill switch, kept across restarts; reload swaps validated strategies or keeps the old ones.
 */

import { toUsd } from '../../core/money.js';
import type { ControlResult } from '../../obs/api-schemas.js';
import type { ActionMeta, BotControl, CardTarget } from '../../obs/bot-view.js';
import type { KillSwitch } from '../../obs/kill-switch.js';
import type { Logger } from '../../obs/logger.js';
import type { Ledger, PullRow } from '../../store/ledger.js';
import { missingScopes, scopesNeeded } from '../../strategy/scopes.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { AccountBot } from '../account/account-bot.js';
import { pauseInfo } from './read-model.js';

export interface RunnerControlOptions {
  ledger: Ledger;
  killSwitch: KillSwitch;
  bots: readonly AccountBot[];
  log: Logger;
  mode: 'live' | 'dry-run';
  /** Each account's key scopes, as checked at start (a reloaded strategy must not need more). */
  scopes: ReadonlyMap<string, readonly string[]>;
  /** Re-reads and validates the config's strategies, by account name; throws on any problem. */
  loadStrategies: () => ReadonlyMap<string, Strategy>;
}

type Card = ControlResult['cards'][number];

export class RunnerControl implements BotControl {
  constructor(private readonly o: RunnerControlOptions) {}

  private result(
    action: ControlResult['action'],
    meta: ActionMeta,
    ok: boolean,
    message: string,
    cards: Card[] = [],
  ): ControlResult {
    const pause = action === 'pause' || action === 'resume' ? pauseInfo(this.o.killSwitch.status()) : null;
    const r = { action, ok, by: meta.by, reason: meta.reason, message, cards, pause };
    this.o.log[ok ? 'warn' : 'error'](
      { action, by: meta.by, why: meta.reason, cards },
      `control: ${message}`,
    );
    return r;
  }

  async pause(meta: ActionMeta): Promise<ControlResult> {
    const s = this.o.killSwitch.pause({ by: meta.by, note: meta.reason });
    return this.result('pause', meta, true, `opening packs paused (${s.reasons.join(', ')})`);
  }

  async resume(meta: ActionMeta): Promise<ControlResult> {
    const s = this.o.killSwitch.resume();
    return this.result(
      'resume',
      meta,
      true,
      s.paused ? `endpoint pause lifted; still paused by ${s.reasons.join(', ')}` : 'opening packs resumed',
    );
  }

  async delist(target: CardTarget, meta: ActionMeta): Promise<ControlResult> {
    const { ledger } = this.o;
    const listings = ledger
      .activeListings()
      .filter((l) => ('all' in target ? true : l.cardId === target.cardId));
    if (listings.length === 0)
      return this.result(
        'delist',
        meta,
        !('cardId' in target),
        'cardId' in target ? `card ${target.cardId} is not listed` : 'nothing listed',
      );
    const why = `operator ${meta.by}: ${meta.reason}`;
    const touched = new Set<AccountBot>();
    const cards: Card[] = [];
    for (const bot of this.o.bots) {
      const mine = listings.filter((l) => l.account === bot.name);
      if (mine.length === 0) continue;
      touched.add(bot);
      // Under the sell side's lock: no listing of these pulls is being created meanwhile.
      await bot.sell.exclusive(async () => {
        for (const l of mine)
          if (l.pullId && ledger.getPull(l.pullId)?.status === 'listed')
            ledger.recordDecision({ pullId: l.pullId, action: 'hold', reason: why });
      });
    }
    for (const bot of touched) await bot.sell.process();
    for (const l of listings) {
      const now = ledger.getListing(l.listingId);
      cards.push({
        account: l.account,
        card_id: l.cardId,
        result:
          now?.state === 'delisted'
            ? 'delisted'
            : now?.state === 'filled'
              ? 'sold before delisting'
              : 'queued (delist retried by the sweep)',
      });
    }
    const done = cards.filter((c) => c.result === 'delisted').length;
    return this.result(
      'delist',
      meta,
      true,
      `${done} of ${cards.length} listing(s) delisted; the cards are held`,
      cards,
    );
  }

  async sellBack(target: CardTarget, meta: ActionMeta): Promise<ControlResult> {
    const { ledger } = this.o;
    const held = ledger.holdings().filter((p) => ('all' in target ? true : p.cardId === target.cardId));
    if (held.length === 0)
      return this.result(
        'sell-back',
        meta,
        !('cardId' in target),
        'cardId' in target ? `card ${target.cardId} is not held` : 'nothing held',
      );
    const why = `operator ${meta.by}: ${meta.reason}`;
    const cards: Card[] = [];
    const queued: PullRow[] = [];
    for (const bot of this.o.bots) {
      const mine = held.filter((p) => p.account === bot.name);
      if (mine.length === 0) continue;
      await bot.sell.exclusive(async () => {
        for (const p of mine) {
          const now = ledger.getPull(p.pullId);
          if (p.kind === 'sealed_pack')
            cards.push({ account: p.account, card_id: p.cardId, result: 'sealed packs cannot be sold back' });
          else if (now?.status === 'sell_pending') queued.push(p);
          else if (now && ['open', 'held', 'list_pending', 'listed'].includes(now.status)) {
            ledger.recordDecision({ pullId: p.pullId, action: 'sell_back', reason: why });
            queued.push(p);
          }
        }
      });
      await bot.sell.process();
    }
    for (const p of queued) {
      const sale = ledger.saleOf(p.pullId);
      cards.push({
        account: p.account,
        card_id: p.cardId,
        result: sale ? `sold ${toUsd(sale.payoutCents).toFixed(2)} USD` : 'queued (retried by the sweep)',
      });
    }
    const sold = cards.filter((c) => c.result.startsWith('sold')).length;
    return this.result('sell-back', meta, true, `${sold} of ${cards.length} card(s) sold back`, cards);
  }

  async reload(meta: ActionMeta): Promise<ControlResult> {
    let next: ReadonlyMap<string, Strategy>;
    try {
      next = this.o.loadStrategies();
      for (const bot of this.o.bots) {
        const s = next.get(bot.name);
        if (!s) throw new Error(`account '${bot.name}' is gone from the config: restart to change accounts`);
        const missing = missingScopes(
          this.o.scopes.get(bot.name) ?? [],
          scopesNeeded(s, this.o.mode),
        ).required;
        if (missing.length > 0)
          throw new Error(
            `account '${bot.name}': the new strategy needs the scope(s) ${missing.join(', ')} the key lacks`,
          );
      }
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return this.result('reload', meta, false, `reload refused, the old strategies stay: ${why}`);
    }
    const names: string[] = [];
    for (const bot of this.o.bots) {
      const s = next.get(bot.name)!;
      bot.setStrategy(s);
      names.push(`${bot.name}: ${s.name}`);
    }
    return this.result('reload', meta, true, `strategies reloaded (${names.join(', ')})`);
  }
}
