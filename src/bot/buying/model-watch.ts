/**
 * The bot's side of expected vs realized (src/strategy/model-gap.ts): what each pack order is
 * recorded with when it is decided (`orderModel`), and the watch that keeps the metrics and the
 * drift alarm up to date from the ledger (`ModelWatch.refresh`, run by the reconcile loop).
 *
 * The z gauges are the current strategy version's (its digest), so a fixed and reloaded strategy
 * starts a fresh comparison; the counters sum the resolved orders of every version of the
 * strategy's name, from the ledger, so they carry on across restarts. Orders that can no longer
 * change are summed once (`Settled`): a refresh reads the orders still open and those with a
 * listing younger than the listing horizon, however old the ledger (at 5000x in a soak, the
 * reconcile loop runs every 60 ms of wall time).
 */
import type { PackPool } from '../../api/schemas.js';
import { MINUTE_MS } from '../../core/clock.js';
import { formatUsd } from '../../core/money.js';
import type { NotifyEvent } from '../../obs/notify/event.js';
import { modelOrders } from '../../store/model-orders.js';
import type { OrderModelInput } from '../../store/model-store.js';
import { EmptyPoolError, type PullDistribution, pullDistribution } from '../../strategy/distribution.js';
import { listingCurve } from '../../strategy/listing-curve.js';
import {
  addFigures,
  DRIFT_MIN_PACKS,
  DRIFT_Z,
  emptyFigures,
  MODEL_PARTS,
  type ModelFigures,
  type ModelOrder,
  orderFigures,
  zOf,
} from '../../strategy/model-gap.js';
import { orderPromise } from '../../strategy/model-promise.js';
import type { ScoreRow } from '../../strategy/score.js';
import { shortDigest, strategyDigest } from '../../strategy/strategy-digest.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { AccountContext } from '../common/context.js';

/** What an order of `quantity` packs opened on `row` is recorded with; null if its pool is not at hand. */
export function orderModel(
  row: ScoreRow,
  pools: readonly PackPool[],
  strategy: Strategy,
  quantity: number,
  distributionOf: (pool: PackPool) => PullDistribution = pullDistribution,
): OrderModelInput | null {
  const pool = pools.find(
    (p) => p.category === row.category && p.pack_type === row.pack_type && p.risk_level === row.risk_level,
  );
  if (!pool) return null;
  try {
    return {
      strategy,
      category: row.category,
      packType: row.pack_type,
      riskLevel: row.risk_level,
      promise: orderPromise(row, distributionOf(pool), strategy, quantity),
    };
  } catch (e) {
    // A row that opens has a scorable pool; an empty one would not have been opened.
    if (e instanceof EmptyPoolError) return null;
    throw e;
  }
}

/**
 * How often the reconcile loop recomputes, in clock time: the alert waits 15 minutes, the listing
 * marks move on the hour, and at 5000x (a soak) this is 180 ms of wall time.
 */
const MODEL_REFRESH_MS = 15 * MINUTE_MS;

/** The comparison rows of one account's current strategy, as the metrics need them. */
export interface ModelSnapshot {
  strategy: string;
  digest: string;
  figures: ModelFigures;
  /** Resolved orders of every version of the strategy: what they were expected to return and returned. */
  resolvedExpectedCents: number;
  resolvedRealizedCents: number;
}

/**
 * The orders whose figures can no longer change, summed once: every pull resolved, and no pull
 * listed or past the model's horizon if one was (a listing's spread grows with its age until
 * then). Each refresh then reads only the orders decided after the settled prefix, less those
 * settled early, so its cost follows the open orders and the listings of the last few days, not
 * the ledger's age nor the number of orders of those days.
 */
interface Settled {
  /** The strategy version (name and digest) the sums are for. */
  key: string;
  /** Orders decided before this instant are in the sums. */
  before: number;
  /**
   * Orders decided since `before` that are in the sums too: their promise rows (`modelRow`, the
   * reads' `skip`) and when each was decided. Numbers in two arrays, not keys in a map: a few
   * days of orders per account, a hundred accounts to a process.
   */
  early: { rows: number[]; at: number[] };
  figures: ModelFigures;
  resolvedExpected: number;
  resolvedRealized: number;
}

/** Keeps `packbot_model_*` and the `model_drift` notification in step with the ledger. */
export class ModelWatch {
  /** Parts (and `total`) of a strategy version beyond the alarm: notified once per crossing. */
  private readonly drifting = new Set<string>();
  private settled: Settled | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  last: ModelSnapshot | undefined;

  constructor(private readonly o: AccountContext & { currentStrategy: () => Strategy }) {}

  /** `refresh` when MODEL_REFRESH_MS of clock time have passed since the last one; else nothing. */
  refreshIfDue(): ModelSnapshot | undefined {
    return this.o.clock.now() >= this.lastAt + MODEL_REFRESH_MS ? this.refresh() : undefined;
  }

  /** Recomputes from the ledger; returns what it exported. Errors are the caller's to log. */
  refresh(): ModelSnapshot {
    const { ledger, clock, metrics, account } = this.o;
    const now = clock.now();
    this.lastAt = now;
    const strategy = this.o.currentStrategy();
    const digest = strategyDigest(strategy);
    const key = `${strategy.name}\u0000${digest}`;
    if (this.settled?.key !== key)
      this.settled = {
        key,
        before: 0,
        early: { rows: [], at: [] },
        figures: emptyFigures(),
        resolvedExpected: 0,
        resolvedRealized: 0,
      };
    const st = this.settled;
    const rows = ledger.modelRows({
      account,
      strategyName: strategy.name,
      decidedSince: st.before,
      skip: st.early.rows,
    });
    const rowOf = new Map(rows.orders.map((o) => [o.intentKey, o.modelRow]));
    const { orders, strategies } = modelOrders(rows, now);
    const curveOf = (d: string) => listingCurve(strategies.get(d) ?? strategy);
    const sorted = [...orders].sort((a, b) => a.at - b.at || (a.key < b.key ? -1 : 1));
    const figures = emptyFigures();
    addFigures(figures, st.figures);
    let expected = st.resolvedExpected;
    let realized = st.resolvedRealized;
    // The prefix of settled orders joins the sums for good (never splitting one instant's orders).
    let settle = 0;
    for (let i = 0; i < sorted.length; i++) {
      const o = sorted[i]!;
      if (!resolved(o) || now - o.at < curveOf(o.digest).horizonMs) break;
      if (sorted[i + 1]?.at !== o.at) settle = i + 1;
    }
    for (let i = 0; i < sorted.length; i++) {
      const o = sorted[i]!;
      const f = o.digest === digest ? orderFigures(o, curveOf(o.digest), now) : null;
      const done = resolved(o);
      const settling = i < settle || (done && !o.pulls.some((p) => p.part === 'listing'));
      if (settling && i >= settle) {
        st.early.rows.push(rowOf.get(o.key)!);
        st.early.at.push(o.at);
      }
      if (done) {
        const e = o.promise.packs * o.promise.realizedEvCents;
        const r = o.pulls.reduce((n, p) => n + p.cents, 0);
        expected += e;
        realized += r;
        if (settling) {
          st.resolvedExpected += e;
          st.resolvedRealized += r;
        }
      }
      if (f) {
        addFigures(figures, f);
        if (settling) addFigures(st.figures, f);
      }
      if (i < settle) st.before = o.at + 1;
    }
    if (st.early.at.some((at) => at < st.before)) {
      const keep = st.early.at.map((at) => at >= st.before);
      st.early = { rows: st.early.rows.filter((_, i) => keep[i]), at: st.early.at.filter((_, i) => keep[i]) };
    }
    const snap: ModelSnapshot = {
      strategy: strategy.name,
      digest,
      figures,
      resolvedExpectedCents: expected,
      resolvedRealizedCents: realized,
    };
    metrics.model.update(account, snap);
    this.alarm(snap, now);
    this.last = snap;
    return snap;
  }

  /** `model_drift` when a part (or the total) goes beyond |z| > 3 over 30 resolved packs; once per crossing. */
  private alarm(s: ModelSnapshot, now: number): void {
    const f = s.figures;
    for (const part of ['total', ...MODEL_PARTS] as const) {
      const sums = part === 'total' ? f.total : f.parts[part];
      const z = zOf(sums);
      const key = `${s.digest}:${part}`;
      const beyond = z !== null && Math.abs(z) > DRIFT_Z && f.resolvedPacks >= DRIFT_MIN_PACKS;
      // Re-armed once back within 2: a z hovering at 3 does not notify at every refresh.
      if (!beyond) {
        if (z === null || Math.abs(z) < DRIFT_Z - 1) this.drifting.delete(key);
        continue;
      }
      if (this.drifting.has(key)) continue;
      this.drifting.add(key);
      this.o.log.warn(
        { strategy: s.strategy, version: shortDigest(s.digest), part, z },
        'the strategy is off its model',
      );
      this.o.notifier?.notify(modelDrift(this.o.account, s, part, sums, z!, now));
    }
  }
}

const resolved = (o: ModelOrder) => o.pulls.every((p) => p.state === 'resolved');

function modelDrift(
  account: string,
  s: ModelSnapshot,
  part: 'total' | (typeof MODEL_PARTS)[number],
  sums: ModelFigures['total'],
  z: number,
  at: number,
): NotifyEvent {
  const gap = sums.realized - sums.expected;
  const se = Math.sqrt(sums.variance);
  const what = part === 'total' ? 'net P&L' : `${part.replace('_', '-')} part`;
  return {
    id: `model_drift:${account}:${shortDigest(s.digest)}:${part}:${at}`,
    event: 'model_drift',
    account,
    at,
    summary:
      `${what} of strategy ${s.strategy} is off its model: realized ${formatUsd(Math.round(sums.realized))} ` +
      `vs expected ${formatUsd(Math.round(sums.expected))} (gap ${formatUsd(Math.round(gap))}, ` +
      `z ${z.toFixed(1)} over ${s.figures.resolvedPacks} resolved packs); see docs/model-drift.md`,
    data: {
      strategy: s.strategy,
      version: shortDigest(s.digest),
      part,
      z,
      expected_cents: Math.round(sums.expected),
      realized_cents: Math.round(sums.realized),
      gap_cents: Math.round(gap),
      se_cents: Math.round(se),
      packs: s.figures.packs,
      resolved_packs: s.figures.resolvedPacks,
    },
  };
}
