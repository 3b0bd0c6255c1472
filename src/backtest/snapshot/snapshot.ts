/**
 * Recording a `packbot.snapshot/v2`: every category × pack × risk level pool exactly as the API
 * returned it (unknown fields kept), the pack lists (for `max_quantity`), every category's shop
 * stock (unless skipped), and the account (null when the key cannot read it), stamped with the
 * server's time (its `Date` header) so that a series lines up with the purchase report. Reads are
 * sequential: the client paces them politely.
 */

import { isPartnerApiError } from '../../api/errors.js';
import { iterShopCards } from '../../api/paginate.js';
import type { PartnerApi } from '../../api/partner-api.js';
import { CATEGORIES, type Category, type PackList, type PackPool, type ShopCard } from '../../api/schemas.js';
import { type ShopStock, SNAPSHOT_FORMAT, SnapshotFile } from '../../api/snapshot-schema.js';
import { type Clock, iso } from '../../core/clock.js';
import { writePrivateFileAtomic } from '../../store/private-files.js';

export interface SnapshotOptions {
  categories?: readonly Category[];
  clock: Clock;
  /** Where the data came from (a URL or "embedded"), stored in `source`. */
  source: string;
  onProgress?: (done: number, total: number, what: string) => void;
  /**
   * The server's time now, from its last `Date` header (HttpPartnerApi.serverNow), or null when
   * it sent none; an in-process market passes its clock. Absent: the local clock is used.
   */
  serverNow?: () => number | null;
  /** Record shop stock (GET /catalog/cards, every page); default true. */
  shop?: boolean;
}

export async function takeSnapshot(api: PartnerApi, opts: SnapshotOptions): Promise<SnapshotFile> {
  const categories = opts.categories ?? CATEGORIES;
  const localStart = opts.clock.now();
  const catalog: PackList[] = [];
  for (const category of categories) catalog.push(await api.listPacks({ category }));
  // The server's time at the start: its clock as of the first answers, less our time since.
  const server = opts.serverNow?.() ?? null;
  const takenAt = server === null ? localStart : server - (opts.clock.now() - localStart);
  const jobs = catalog.flatMap((list) =>
    list.packs.flatMap((p) =>
      p.risk_levels.map((risk) => ({ category: list.category, pack: p.pack_type, risk })),
    ),
  );
  const pools: PackPool[] = [];
  let done = 0;
  for (const j of jobs) {
    opts.onProgress?.(done, jobs.length, `${j.category}/${j.pack}/${j.risk}`);
    try {
      pools.push(
        await api.getPackPool({ category: j.category as Category, pack_type: j.pack, risk_level: j.risk }),
      );
    } catch (e) {
      // A pack that stopped being buyable between the list and the pool read: 404, skip it.
      if (!(isPartnerApiError(e) && e.status === 404)) throw e;
    }
    done++;
  }
  let shop: ShopStock[] | null = null;
  if (opts.shop !== false) {
    opts.onProgress?.(done, jobs.length, 'shop');
    shop = await readShop(api, categories);
  }
  opts.onProgress?.(done, jobs.length, 'account');
  let account = null;
  try {
    account = await api.getAccount();
  } catch (e) {
    if (!(isPartnerApiError(e) && (e.status === 403 || e.status === 401))) throw e;
  }
  return SnapshotFile.parse({
    format: SNAPSHOT_FORMAT,
    taken_at: iso(takenAt),
    local_time: iso(localStart),
    time_source: server === null ? 'local' : 'server',
    source: opts.source,
    account,
    pools,
    catalog,
    shop,
  });
}

/** Every shop card of the given categories, page after page of the largest size (GET /catalog/cards). */
export async function readShop(api: PartnerApi, categories: readonly Category[]): Promise<ShopStock[]> {
  const out: ShopStock[] = [];
  for (const category of categories) {
    const cards: ShopCard[] = [];
    for await (const c of iterShopCards(api, { category, per_page: 1000 })) cards.push(c);
    out.push({ category, total: cards.length, cards });
  }
  return out;
}

/**
 * Writes the snapshot atomically (a reader never sees half a file) and 0600: it holds the
 * account's balance and limits.
 */
export function writeSnapshot(path: string, snapshot: SnapshotFile): void {
  writePrivateFileAtomic(path, `${JSON.stringify(snapshot, null, 2)}\n`, `${path}.tmp-${process.pid}`);
}
