/**
 * How the service names a bought card for sell-back is not in the spec: the simulator's default is
 * the purchase's transaction id, which the ledger uses as the bought card's pull id, but a service
 * may show the card in the vault under another `pull_id` (its checkout id, or an id of its own).
 * The vault is the authority: a bought card of ours shown there under another pull_id is sold
 * back under that one (`PullRow.sellPullId`).
 */
import type { VaultEntry } from '../../api/schemas.js';
import type { AccountContext } from '../common/context.js';

/** Learns from a vault read the pull_id of every bought card shown under another one; returns how many. */
export function learnSellIds(o: AccountContext, vault: ReadonlyMap<string, VaultEntry>): number {
  let learnt = 0;
  for (const v of vault.values()) {
    if (v.pull_id === null || o.ledger.hasPull(v.pull_id)) continue;
    const pull = o.ledger.ownedPullByCard(v.card_id);
    if (pull?.origin !== 'purchase' || pull.sellPullId === v.pull_id) continue;
    o.ledger.setSellPullId(pull.pullId, v.pull_id);
    o.log.info(
      { pull: pull.pullId, card: v.card_id, sell_id: v.pull_id },
      'bought card named otherwise by the vault',
    );
    learnt++;
  }
  return learnt;
}

/** The id a pull is sold back under. */
export function sellIdOf(p: { pullId: string; sellPullId?: string | null }): string {
  return p.sellPullId ?? p.pullId;
}
