/**
 * Whether a backtest models card buying (`cards.enabled`): only in the dynamic market, on a
 * snapshot that recorded the shop (v2), in the categories of `cards.categories` it recorded; else
 * a notice says why card buying was not backtested (docs/backtest.md, "Shop cards").
 */
import type { SnapshotFile } from '../../api/snapshot-schema.js';
import type { Strategy } from '../../strategy/strategy-schema.js';

/** Whether and how a backtest models card buying; null when the strategy does not buy cards. */
export interface CardsSetup {
  /** False: cards are not backtested (`notice` says why). */
  backtested: boolean;
  /** Shop categories the strategy buys in that the snapshot recorded (report breakdown order). */
  categories: string[];
  notice: string | null;
}

export function cardsSetup(
  snapshot: SnapshotFile,
  strategy: Strategy,
  market: 'static' | 'dynamic',
): CardsSetup | null {
  const cards = strategy.cards;
  if (!cards.enabled) return null;
  const off = (notice: string): CardsSetup => ({ backtested: false, categories: [], notice });
  if (market !== 'dynamic')
    return off('cards are backtested in the dynamic market only: card buying was not backtested');
  const shop = snapshot.shop;
  if (!shop)
    return off(
      'the snapshot records no shop (format v1, or recorded with --no-shop): card buying was not backtested',
    );
  const recorded = new Set(shop.map((s) => s.category));
  const categories = cards.categories.filter((c) => recorded.has(c));
  const missing = cards.categories.filter((c) => !recorded.has(c));
  if (categories.length === 0)
    return off(
      `the snapshot's shop has no category of cards.categories (${missing.join(', ')}): card buying was not backtested`,
    );
  return {
    backtested: true,
    categories,
    notice:
      missing.length > 0 ? `the snapshot's shop has no ${missing.join(', ')}: not bought from there` : null,
  };
}
