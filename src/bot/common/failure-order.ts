import { isPartnerApiError, type PartnerApiError } from '../../api/errors.js';

/**
 * Card ids whose last request failed, in the order of their last failure, oldest first. A pass
 * over many cards that stops at its first failure (so a failing service holds the sell side's
 * lock for one request's retries, not one per card) goes through the cards that did not fail
 * first, then the failed ones oldest failure first: a card the service keeps failing holds the
 * others back for one pass at most.
 */
export class FailureOrder {
  /** A Set's iteration order is its insertion order: re-inserting moves a card to the back. */
  private readonly order = new Set<string>();

  failed(cardId: string): void {
    this.order.delete(cardId);
    this.order.add(cardId);
  }

  cleared(cardId: string): void {
    this.order.delete(cardId);
  }

  has(cardId: string): boolean {
    return this.order.has(cardId);
  }

  /**
   * One request of a pass for `cardId`: cleared when it succeeds. An API error that is not fatal
   * moves the card to the back and is returned, for the caller to log and end its pass; anything
   * else is thrown.
   */
  async attempt(cardId: string, request: () => Promise<unknown>): Promise<PartnerApiError | undefined> {
    try {
      await request();
    } catch (e) {
      if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
      this.failed(cardId);
      return e;
    }
    this.cleared(cardId);
    return undefined;
  }

  /** `items` in pass order (sorted in place): no failure first, in their own order, then the failed. */
  sort<T>(items: T[], cardOf: (item: T) => string): T[] {
    if (this.order.size === 0) return items;
    const rank = new Map<string, number>();
    for (const cardId of this.order) rank.set(cardId, rank.size);
    return items.sort((a, b) => (rank.get(cardOf(a)) ?? -1) - (rank.get(cardOf(b)) ?? -1));
  }
}
