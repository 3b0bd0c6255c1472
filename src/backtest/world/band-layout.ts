/**
 * The part of the dynamic market's world layout (world-layout.ts) that no strategy changes: every
 * pack's bands in the world's arrays (sizes, room, offsets), the recorded cards as value ids, and
 * each band's distinct values in id order (recorded cards first, then its value grid, each value
 * numbered when first seen). Built once per snapshot object, so the engines a worker builds for a
 * search's candidates share it; each engine adds only what its strategy decides (the values'
 * expected realized values, its scorers).
 */
import { toCents } from '../../core/money.js';
import type { BacktestModel } from '../path/model.js';
import { packTemplates } from './pack-templates.js';
import { valueGrid } from './value-grid.js';

/** The world's band arrays no strategy changes (world-layout.ts's WorldBands adds the rest). */
export interface SharedBands {
  /** Per band: its recorded size (what restock fills it back to). */
  size: Int32Array;
  /** Per band: where its cards start in `ids`, and their room there. */
  off: Int32Array;
  cap: Int32Array;
  /** Per band: 1 if its cards are sealed packs (the consolation band). */
  sealed: Uint8Array;
  /** Per band: where its values start among all bands' values (ids count from there). */
  valOff: Int32Array;
  /** Per band: the ids a generated card can take (its value grid): `gridId[gridOff + k]`, k < `gridLen`. */
  gridOff: Int32Array;
  gridLen: Int32Array;
  gridId: Int32Array;
  /** The recorded cards: ids by position, and per band count and Σ value. */
  ids: Int32Array;
  count: Int32Array;
  sum: Float64Array;
}

/** SharedBands, with each band's values in id order. */
export interface BandLayout extends SharedBands {
  /** Per band: its number of distinct values (its values are `values[valOff[g] …]`). */
  valLen: Int32Array;
  /** Per value (valOff + id): its value in cents. */
  values: Float64Array;
}

const layouts = new WeakMap<BacktestModel['snapshot'], BandLayout>();

/** The layout of the model's snapshot (packTemplates order, band g of the market as WorldBands). */
export function bandLayout(model: BacktestModel): BandLayout {
  const cached = layouts.get(model.snapshot);
  if (cached) return cached;
  const bands = packTemplates(model).flatMap((t) => t.bands);
  const nb = bands.length;
  const size = Int32Array.from(bands, (b) => b.size);
  const cap = Int32Array.from(bands, (b) => Math.max(1, b.size, b.cards.length));
  const off = offsets(cap);
  const ids = new Int32Array(total(cap));
  const count = new Int32Array(nb);
  const sum = new Float64Array(nb);
  const grids = bands.map((b) => valueGrid(b.minCents, b.maxCents));
  const gridLen = Int32Array.from(grids, (g) => g.length);
  const gridOff = offsets(gridLen);
  const gridId = new Int32Array(total(gridLen));
  const byId: number[][] = [];
  bands.forEach((b, g) => {
    const seen = new Map<number, number>();
    const values: number[] = [];
    const idOf = (v: number): number => {
      let id = seen.get(v);
      if (id === undefined) {
        id = values.length;
        values.push(v);
        seen.set(v, id);
      }
      return id;
    };
    for (const c of b.cards) {
      const v = toCents(c.market_value);
      ids[off[g]! + count[g]!] = idOf(v);
      count[g] = count[g]! + 1;
      sum[g] = sum[g]! + v;
    }
    const grid = grids[g]!;
    for (let k = 0; k < grid.length; k++) gridId[gridOff[g]! + k] = idOf(grid[k]!);
    byId.push(values);
  });
  const valLen = Int32Array.from(byId, (x) => x.length);
  const valOff = offsets(valLen);
  const values = new Float64Array(total(valLen));
  byId.forEach((x, g) => {
    values.set(x, valOff[g]!);
  });
  const layout: BandLayout = {
    size,
    off,
    cap,
    sealed: Uint8Array.from(bands, (b) => (b.sealed ? 1 : 0)),
    valOff,
    valLen,
    values,
    gridOff,
    gridLen,
    gridId,
    ids,
    count,
    sum,
  };
  layouts.set(model.snapshot, layout);
  return layout;
}

/** Start of each of consecutive blocks of the given lengths in one array. */
function offsets(lengths: Int32Array): Int32Array {
  const off = new Int32Array(lengths.length);
  for (let i = 1; i < lengths.length; i++) off[i] = off[i - 1]! + lengths[i - 1]!;
  return off;
}

function total(lengths: Int32Array): number {
  let n = 0;
  for (let i = 0; i < lengths.length; i++) n += lengths[i]!;
  return n;
}
