/**
 * Recording a `packbot.snapshot/v1`: every category × pack × risk level pool exactly as the API
 * returned it (unknown fields kept), the pack lists (for `max_quantity`), and the account (null
 * when the key cannot read it). Reads are sequential: the client paces them politely.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { isPartnerApiError } from '../api/errors.js';
import type { PartnerApi } from '../api/partner-api.js';
import { CATEGORIES, type Category, type PackList, type PackPool } from '../api/schemas.js';
import { SNAPSHOT_FORMAT, SnapshotFile } from '../api/snapshot-schema.js';
import { type Clock, iso } from '../core/clock.js';

export interface SnapshotOptions {
  categories?: readonly Category[];
  clock: Clock;
  /** Where the data came from (a URL or "embedded"), stored in `source`. */
  source: string;
  onProgress?: (done: number, total: number, what: string) => void;
}

export async function takeSnapshot(api: PartnerApi, opts: SnapshotOptions): Promise<SnapshotFile> {
  const categories = opts.categories ?? CATEGORIES;
  const takenAt = iso(opts.clock.now());
  const catalog: PackList[] = [];
  for (const category of categories) catalog.push(await api.listPacks({ category }));
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
  opts.onProgress?.(done, jobs.length, 'account');
  let account = null;
  try {
    account = await api.getAccount();
  } catch (e) {
    if (!(isPartnerApiError(e) && (e.status === 403 || e.status === 401))) throw e;
  }
  return SnapshotFile.parse({
    format: SNAPSHOT_FORMAT,
    taken_at: takenAt,
    source: opts.source,
    account,
    pools,
    catalog,
  });
}

/** Writes the snapshot atomically: a reader never sees half a file. */
export function writeSnapshot(path: string, snapshot: SnapshotFile): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(snapshot, null, 2)}\n`);
  renameSync(tmp, path);
}
