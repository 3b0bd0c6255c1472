/**
 * The incremental scorer (src/strategy/incremental-score.ts) driven card by card, for tests:
 * cards by slot (`add`, `remove`, `revalue`; any non-negative id unique within its band), the
 * equivalent pool body to score with `scorePool` (`body`), and rows of it (`row`, `rowFor`).
 *
 * It keeps the cards itself, by position as value ids, as the dynamic backtest market does
 * (src/backtest/world/world-pools.ts), and hands every band that changed to the scorer with `setBand`
 * before a row: the rows are the production scorer's own, made the way production makes them.
 */
import type { Band, PackPool, PoolCard } from '../../src/api/schemas.js';
import { fastCents } from '../../src/strategy/cents.js';
import { IncrementalScorer } from '../../src/strategy/incremental-score.js';
import type { ScoreContext, ScoreRow } from '../../src/strategy/score.js';
import type { Strategy } from '../../src/strategy/strategy-schema.js';

export class SlotScorer {
  /** The equivalent pool's `available` and (active) `chase`: what `row` scores. */
  available: boolean;
  chase: PackPool['chase'];
  /** Per band: the value id of the card at each position, and its slot. */
  private readonly ids: number[][];
  private readonly slots: number[][];
  /** Per band: the position of each slot in the band. */
  private readonly pos: Map<number, number>[];
  /** Per band: each value id's value (cents). */
  private readonly valueOfId: Map<number, number>[];
  /** Per band: running Σ expected realized value (what the market keeps for `realizedMeanOf`). */
  private readonly expected: Float64Array;
  /** Bands changed since the scorer last had them. */
  private readonly changed = new Set<number>();
  /** The pool header `row` last scored, and the `available` and `chase` it was made with. */
  private header: PackPool | null = null;
  private headerFor: { available: boolean; chase: PackPool['chase'] } | null = null;

  constructor(
    readonly template: PackPool,
    readonly strategy: Strategy,
    /** The production scorer the bands are handed to (a clone's, for `clone`). */
    readonly scorer: IncrementalScorer = new IncrementalScorer(template, strategy),
    copyOf?: SlotScorer,
  ) {
    this.available = copyOf ? copyOf.available : template.available;
    this.chase = copyOf ? copyOf.chase : template.chase;
    const bands = template.bands.length;
    this.ids = copyOf ? copyOf.ids.map((x) => [...x]) : Array.from({ length: bands }, () => []);
    this.slots = copyOf ? copyOf.slots.map((x) => [...x]) : Array.from({ length: bands }, () => []);
    this.pos = copyOf ? copyOf.pos.map((x) => new Map(x)) : Array.from({ length: bands }, () => new Map());
    this.valueOfId = copyOf
      ? copyOf.valueOfId.map((x) => new Map(x))
      : Array.from({ length: bands }, () => new Map());
    this.expected = copyOf ? copyOf.expected.slice() : new Float64Array(bands);
    if (copyOf) for (const b of copyOf.changed) this.changed.add(b);
  }

  /** A scorer holding a pool body's cards (slot = index in `pool.cards`); cards of no band are ignored. */
  static fromPool(pool: PackPool, strategy: Strategy): SlotScorer {
    const s = new SlotScorer(pool, strategy);
    const band = new Map<string, number>();
    pool.bands.forEach((b, i) => {
      if (!band.has(b.bucket_id)) band.set(b.bucket_id, i);
    });
    pool.cards.forEach((c, i) => {
      const b = band.get(c.bucket_id);
      if (b !== undefined) s.add(b, i, fastCents(c.market_value));
    });
    return s;
  }

  has(band: number, slot: number): boolean {
    return this.pos[band]!.has(slot);
  }

  /** Adds card `slot` worth `valueCents` to `band` (at its last position). */
  add(band: number, slot: number, valueCents: number): void {
    if (slot < 0 || this.has(band, slot)) throw new RangeError(`card ${slot} is already in band ${band}`);
    const id = this.scorer.valueId(band, valueCents);
    this.valueOfId[band]!.set(id, valueCents);
    this.pos[band]!.set(slot, this.ids[band]!.length);
    this.ids[band]!.push(id);
    this.slots[band]!.push(slot);
    this.expected[band] = this.expected[band]! + this.scorer.expectedOf(band, id);
    this.changed.add(band);
  }

  /** Removes card `slot` from `band`: the band's last card takes its position. */
  remove(band: number, slot: number): void {
    const at = this.pos[band]!.get(slot);
    if (at === undefined) throw new RangeError(`card ${slot} is not in band ${band}`);
    const ids = this.ids[band]!;
    const slots = this.slots[band]!;
    const last = ids.length - 1;
    // Back to an exact zero when the band empties, as the market keeps it.
    this.expected[band] = last === 0 ? 0 : this.expected[band]! - this.scorer.expectedOf(band, ids[at]!);
    ids[at] = ids[last]!;
    slots[at] = slots[last]!;
    this.pos[band]!.set(slots[at]!, at);
    ids.pop();
    slots.pop();
    this.pos[band]!.delete(slot);
    this.changed.add(band);
  }

  /** A card's value changed (e.g. value drift). */
  revalue(band: number, slot: number, valueCents: number): void {
    this.remove(band, slot);
    this.add(band, slot, valueCents);
  }

  /** Cards per band. */
  counts(): Int32Array {
    return Int32Array.from(this.ids, (x) => x.length);
  }

  /** Whether a pull can be drawn from `view`'s equivalent pool (else `rowFor` returns null). */
  drawable(view: PackPool = this.poolHeader()): boolean {
    if ((view.chase?.probability ?? 0) >= 1) return true;
    return this.ids.some((x, b) => x.length > 0 && view.bands[b]!.odds > 0);
  }

  /** The row of the equivalent pool with the current `available` and `chase`. */
  row(ctx: ScoreContext = {}): ScoreRow | null {
    return this.rowFor(this.poolHeader(), ctx);
  }

  /** The production scorer's row of `view` over these cards (the changed bands handed over first). */
  rowFor(view: PackPool, ctx: ScoreContext = {}): ScoreRow | null {
    this.handOver();
    return this.scorer.rowFor(view, ctx);
  }

  /** The realized mean `rowFor(view)` decides on, from the running sums (`realizedMeanOf`). */
  realizedMean(view: PackPool = this.poolHeader()): number {
    return this.scorer.realizedMeanOf(view, this.counts(), this.expected);
  }

  /** An independent copy over a clone of the scorer (value ids and the once-per-view checks shared). */
  clone(): SlotScorer {
    this.handOver();
    return new SlotScorer(this.template, this.strategy, this.scorer.clone(), this);
  }

  /** The equivalent pool body (what `row` scores): O(cards). */
  body(): PackPool {
    const cards: PoolCard[] = [];
    const bands: Band[] = this.template.bands.map((b, i) => {
      const n = this.ids[i]!.length;
      const odds = n > 0 ? b.odds : 0;
      if (odds > 0)
        for (let k = 0; k < n; k++)
          cards.push({
            id: `s${this.slots[i]![k]}`,
            name: 'card',
            market_value: this.valueOfId[i]!.get(this.ids[i]![k]!)! / 100,
            bucket_id: b.bucket_id,
          });
      return { ...b, odds, hittable_cards: odds > 0 ? n : 0 };
    });
    return {
      ...this.template,
      available: this.available,
      chase: this.chase,
      bands,
      cards,
      total_cards: cards.length,
    };
  }

  /** Hands every band changed since the last row to the scorer (`setBand`, as the market's `sync`). */
  private handOver(): void {
    for (const b of this.changed) {
      const ids = Int32Array.from(this.ids[b]!);
      this.scorer.setBand(b, ids, 0, ids.length);
    }
    this.changed.clear();
  }

  /** The template with the current `available` and `chase` (one object while they stand). */
  private poolHeader(): PackPool {
    if (!this.header || this.headerFor?.available !== this.available || this.headerFor.chase !== this.chase) {
      this.header = { ...this.template, available: this.available, chase: this.chase };
      this.headerFor = { available: this.available, chase: this.chase };
    }
    return this.header;
  }
}
