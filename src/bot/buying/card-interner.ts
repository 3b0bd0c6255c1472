/**
 * One object per pool card the service answers unchanged. A pack's risk levels list the same
 * cards, and a pool read every few minutes answers mostly the cards of the last one: keeping the
 * objects already held (instead of each read's fresh copies) holds a card once, not once per risk
 * level, and lets each read's copies die young instead of being promoted and collected minutes
 * later (the long-running bot's memory sawtooth). Equal means the same own keys with the same
 * primitive values; a card with any object value is never shared.
 */
import type { PackPool, PoolCard } from '../../api/schemas.js';

export class PoolCardInterner {
  /** Cards kept by the last finished read, by id. */
  private kept = new Map<string, PoolCard>();
  /** Cards kept by the read in progress, by id. */
  private reading = new Map<string, PoolCard>();

  /** `pool` with each card replaced by a kept equal one where there is one. */
  pool(pool: PackPool): PackPool {
    let cards: PoolCard[] | undefined;
    for (let i = 0; i < pool.cards.length; i++) {
      const card = pool.cards[i]!;
      const same = this.find(card);
      if (same === card) continue;
      cards ??= pool.cards.slice();
      cards[i] = same;
    }
    return cards ? { ...pool, cards } : pool;
  }

  /** The read is over: cards it did not answer are let go. */
  endRead(): void {
    this.kept = this.reading;
    this.reading = new Map();
  }

  private find(card: PoolCard): PoolCard {
    const now = this.reading.get(card.id);
    if (now !== undefined && sameCard(now, card)) return now;
    const before = this.kept.get(card.id);
    const same = before !== undefined && sameCard(before, card) ? before : card;
    if (now === undefined && primitiveOnly(same)) this.reading.set(card.id, same);
    return same;
  }
}

function primitiveOnly(card: PoolCard): boolean {
  for (const v of Object.values(card)) if (v !== null && typeof v === 'object') return false;
  return true;
}

function sameCard(a: PoolCard, b: PoolCard): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    const v = (a as Record<string, unknown>)[k];
    if ((v !== null && typeof v === 'object') || !Object.hasOwn(b, k)) return false;
    if (!Object.is(v, (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}
