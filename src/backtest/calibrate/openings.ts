/**
 * Other users' pack openings from the purchase report (GET /pulls): every pack anyone bought, by
 * catalog and pack type, with an opaque stable user id. The report leaves out free openings and
 * internal accounts (spec), which the world counts: the rate is scaled up by the fractions the
 * world assumes for them, which the API cannot show.
 */
import type { PurchaseReportRow } from '../../api/schemas.js';
import { compareText } from '../../core/compare-text.js';

export interface OpeningsEstimate {
  /** Openings per hour by other users, free and internal ones included (scaled). */
  perHour: number;
  stderr: number;
  /** Report rows counted (others' only). */
  rows: number;
  /** Rows left out as the account's own. */
  own: number;
  hours: number;
  /** Each pack's share of the others' rows (`source/pack_type`), largest first. */
  shares: { pack: string; rows: number; share: number }[];
}

export interface OpeningsInput {
  rows: readonly PurchaseReportRow[];
  sinceMs: number;
  untilMs: number;
  /** Report user ids that are the account's own (learnt by the bot), left out. */
  ownUserIds: ReadonlySet<string>;
  /** The world's unobservable fractions (defaults of `dynamics`). */
  freeFraction: number;
  internalFraction: number;
}

const packKey = (r: Pick<PurchaseReportRow, 'source' | 'pack_type'>): string => `${r.source}/${r.pack_type}`;

export function estimateOpenings(o: OpeningsInput): OpeningsEstimate {
  const hours = Math.max(0, (o.untilMs - o.sinceMs) / 3_600_000);
  const byPack = new Map<string, number>();
  let n = 0;
  let own = 0;
  for (const r of o.rows) {
    const at = Date.parse(r.created_at);
    if (!(at >= o.sinceMs && at <= o.untilMs)) continue;
    if (o.ownUserIds.has(r.user_id)) {
      own++;
      continue;
    }
    n++;
    const k = packKey(r);
    byPack.set(k, (byPack.get(k) ?? 0) + 1);
  }
  const seen = (1 - o.freeFraction) * (1 - o.internalFraction);
  const scale = hours > 0 && seen > 0 ? 1 / (hours * seen) : 0;
  return {
    perHour: n * scale,
    // A Poisson count: its standard error is its square root.
    stderr: Math.sqrt(n) * scale,
    rows: n,
    own,
    hours,
    shares: [...byPack.entries()]
      .map(([pack, rows]) => ({ pack, rows, share: n > 0 ? rows / n : 0 }))
      .sort((a, b) => b.rows - a.rows || compareText(a.pack, b.pack)),
  };
}
