/**
 * The law of one opening by another user, over the packs open to them on a path (world-pools.ts
 * draws the openings): one alias table over what an opening does (`othersOpeningShares`), entry e
 * taking a card of market band `band[e]` (NO_BAND: none) or the chase of pack `chase[e]` (NO_PACK:
 * none); an entry with neither is an opening that takes nothing. It changes only when a band
 * empties or refills, a chase is hit or given back (the world says so: `invalidate`), or a chase's
 * end time passes: rebuilt then, not per opening.
 */
import { AliasTable } from '../../market/sampler.js';
import { NO_BAND, NO_PACK, type PackState } from './pack-state.js';

/** What the rebuild reads of the world's packs. */
export interface OpenPacks {
  readonly packs: readonly PackState[];
  drawable(p: PackState, r: number, at: number): boolean;
  /** Other users' opening shares of pack p at `at`, `open` packs being open to them. */
  sharesOf(p: PackState, open: number, at: number): ArrayLike<number>;
}

export class OthersLaw {
  /** Packs open to other users (indexes into `packs`, the first `openCount`), in pack order. */
  private openList = new Int32Array(0);
  private openCount = 0;
  private dirty = true;
  /** Until when the open list holds (the next chase end). */
  private validUntil = Number.NEGATIVE_INFINITY;
  private alias: AliasTable | null = null;
  /** Per entry of the law: the market band it takes a card of (NO_BAND: none). */
  band = new Int32Array(0);
  /** Per entry of the law: the pack whose chase it hits (NO_PACK: none). */
  chase = new Int32Array(0);

  /** A band emptied or refilled, or a chase was hit or given back: rebuilt at the next opening. */
  invalidate(): void {
    this.dirty = true;
  }

  /** The law at `at` (null: no pack is open to other users), rebuilt when stale. */
  at(at: number, world: OpenPacks): AliasTable | null {
    if (this.dirty || at >= this.validUntil) this.rebuild(at, world);
    return this.alias;
  }

  private refreshOpenList(at: number, world: OpenPacks): void {
    const packs = world.packs;
    if (this.openList.length < packs.length) this.openList = new Int32Array(packs.length);
    let n = 0;
    let until = Number.POSITIVE_INFINITY;
    for (let i = 0; i < packs.length; i++) {
      const p = packs[i]!;
      if (openToOthers(p, at, world)) this.openList[n++] = i;
      if (p.chaseEndsAt > at && p.chaseEndsAt < until) until = p.chaseEndsAt;
    }
    this.openCount = n;
    this.dirty = false;
    this.validUntil = until;
  }

  private rebuild(at: number, world: OpenPacks): void {
    this.refreshOpenList(at, world);
    const open = this.openCount;
    if (open === 0) {
      this.alias = null;
      return;
    }
    const weights: number[] = [];
    const bands: number[] = [];
    const chases: number[] = [];
    for (let j = 0; j < open; j++) {
      const pi = this.openList[j]!;
      const p = world.packs[pi]!;
      const shares = world.sharesOf(p, open, at);
      for (let e = 0; e < shares.length; e++) {
        if (!(shares[e]! > 0)) continue;
        weights.push(shares[e]!);
        // Entry 0 is the chase, entry i + 1 band i, the last the opening that takes nothing.
        bands.push(e >= 1 && e <= p.nb ? p.b0 + e - 1 : NO_BAND);
        chases.push(e === 0 ? pi : NO_PACK);
      }
    }
    this.alias = new AliasTable(weights);
    this.band = Int32Array.from(bands);
    this.chase = Int32Array.from(chases);
  }
}

function openToOthers(p: PackState, at: number, world: OpenPacks): boolean {
  const pools = p.t.pools;
  for (let r = 0; r < pools.length; r++)
    if (pools[r]!.body.available && world.drawable(p, r, at)) return true;
  return false;
}
