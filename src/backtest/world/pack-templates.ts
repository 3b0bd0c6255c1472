/**
 * The snapshot's packs as the dynamic market sees them: each pack (category and pack type) with
 * its risk levels' bands merged, their odds per risk level, the recorded cards of every risk
 * level's body, and the pools it stands for. A function of the snapshot alone.
 */
import type { Band, PackPool, PoolCard } from '../../api/schemas.js';
import { toCents } from '../../core/money.js';
import type { BacktestModel } from '../path/model.js';

export interface BandTemplate {
  band: Band;
  minCents: number;
  maxCents: number;
  sealed: boolean;
  odds: Map<string, number>;
  cards: PoolCard[];
  /** Recorded size: listed cards plus unseen ones (hittable_cards beyond the listed). */
  size: number;
}

export interface PackTemplate {
  category: string;
  packType: string;
  bands: BandTemplate[];
  chase: PackPool['chase'];
  /** Model pool index for each risk level of this pack, and the body recorded for it. */
  pools: { index: number; risk: string; body: PackPool }[];
}

/**
 * By snapshot object: the templates are a function of the model's pools, which buildModel takes
 * from the snapshot alone (no strategy), and are never written, so the engines a worker builds
 * from one snapshot (one per candidate in a search) share them.
 */
const templates = new WeakMap<BacktestModel['snapshot'], PackTemplate[]>();

export function packTemplates(model: BacktestModel): PackTemplate[] {
  const cached = templates.get(model.snapshot);
  if (cached) return cached;
  const byPack = new Map<string, PackTemplate>();
  for (const p of model.pools) {
    const k = `${p.category}/${p.packType}`;
    let t = byPack.get(k);
    if (!t) {
      t = { category: p.category, packType: p.packType, bands: [], chase: null, pools: [] };
      byPack.set(k, t);
    }
    t.pools.push({ index: p.index, risk: p.risk, body: p.body });
    if (!t.chase && p.body.chase) t.chase = p.body.chase;
    for (const b of p.body.bands) {
      let bt = t.bands.find((x) => x.band.bucket_id === b.bucket_id);
      if (!bt) {
        bt = {
          band: b,
          minCents: toCents(b.min_value),
          maxCents: toCents(b.max_value),
          sealed: b.is_consolation,
          odds: new Map(),
          cards: [],
          size: 0,
        };
        t.bands.push(bt);
      }
      bt.odds.set(p.risk, b.odds);
      const seen = new Set(bt.cards.map((c) => c.id));
      for (const c of p.body.cards) if (c.bucket_id === b.bucket_id && !seen.has(c.id)) bt.cards.push(c);
      bt.size = Math.max(bt.size, b.hittable_cards, bt.cards.length);
    }
  }
  const list = [...byPack.values()];
  templates.set(model.snapshot, list);
  return list;
}
