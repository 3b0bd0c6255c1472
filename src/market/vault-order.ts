/**
 * What an account's vault holds and in which order: its cards in the vault or listed, and its
 * sealed packs when the world shows them (`rules.vault_sealed_packs`). The spec fixes neither
 * whether sealed packs appear nor the order of the pages (`rules.vault_order`): acquisition order
 * keeps a card's page while others arrive; newest first, by card id or by value move cards between
 * pages as the vault changes, which a client paging through it must survive.
 */
import type { Category } from '../api/schemas.js';
import type { Acquisition } from './buyback.js';
import { type CardRec, cardValue } from './inventory.js';
import type { MarketState } from './state.js';

export interface Holding {
  c: CardRec;
  acq: Acquisition;
}

const byId = (a: Holding, b: Holding): number => (a.c.id < b.c.id ? -1 : a.c.id > b.c.id ? 1 : 0);

export function vaultHoldings(s: MarketState, accountId: string, category: Category): Holding[] {
  const rules = s.world.rules;
  const held: Holding[] = [];
  // Acquisitions are kept in the order they happened (a Map keeps insertion order).
  for (const acq of s.acquisitions.values()) {
    const c = s.inv.cards[acq.slot]!;
    if (c.acquisition !== acq.id || c.owner !== accountId || c.category !== category) continue;
    if (c.loc === 'vault' || c.loc === 'listed' || (c.loc === 'sealed' && rules.vault_sealed_packs))
      held.push({ c, acq });
  }
  switch (rules.vault_order) {
    case 'acquired':
      return held;
    case 'newest_first':
      return held.reverse();
    case 'card_id':
      return held.sort(byId);
    case 'value_desc':
      return held.sort((a, b) => cardValue(s.inv, b.c) - cardValue(s.inv, a.c) || byId(a, b));
  }
}
