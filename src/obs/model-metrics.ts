/**
 * Expected vs realized as Prometheus series (docs/model-drift.md), labelled by `account` and
 * `strategy` (the strategy's name), registered on the bot's own registry by `Metrics`:
 *
 * - `packbot_model_expected_net_usd_total`, `packbot_model_realized_net_usd_total` (counters):
 *   what the resolved orders of the strategy were expected to return and returned, net of the
 *   marketplace fee (sell-backs, sales, sealed packs at the strategy's worth). The packs' price is
 *   not taken off: a counter cannot fall, and a pack often returns less than it cost; the same
 *   orders' spend is in the ledger (`packbot report`). Their difference over a window is the gap
 *   of the orders resolved in it. Set from the ledger's totals, so they carry on over restarts.
 * - `packbot_model_gap_zscore{part}`: z = gap / se of the current strategy version, `part` one of
 *   `total`, `sell_back`, `listing`, `held` (0 while there is nothing to compare).
 * - `packbot_model_resolved_packs`: packs of the current version whose pull's outcome is in
 *   (the alert waits for 30).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ModelFigures } from '../strategy/model-gap.js';
import { MODEL_PARTS, zOf } from '../strategy/model-gap.js';

/** What `update` needs of one account's current strategy (src/bot/buying/model-watch.ts builds it). */
export interface ModelSeries {
  strategy: string;
  figures: ModelFigures;
  resolvedExpectedCents: number;
  resolvedRealizedCents: number;
}

const MODEL_ZSCORE_PARTS = ['total', ...MODEL_PARTS] as const;

/** A label value from a name a user chose: kept when it is a plain short name, else `other`. */
const safe = (name: string) => (/^[A-Za-z0-9_.:-]{1,64}$/.test(name) ? name : 'other');

export class ModelMetrics {
  readonly expectedNetUsdTotal: Counter<'account' | 'strategy'>;
  readonly realizedNetUsdTotal: Counter<'account' | 'strategy'>;
  readonly gapZscore: Gauge<'account' | 'strategy' | 'part'>;
  readonly resolvedPacks: Gauge<'account' | 'strategy'>;
  /** Per account, the strategy label its gauges carry now. */
  private readonly current = new Map<string, string>();
  /** Per account and strategy label, the counters' totals so far (cents). */
  private readonly totals = new Map<string, { expected: number; realized: number }>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.expectedNetUsdTotal = new Counter({
      name: 'packbot_model_expected_net_usd_total',
      help: "What the strategy's resolved orders were expected to return (scorer's realized EV), USD, before their price",
      labelNames: ['account', 'strategy'] as const,
      registers,
    });
    this.realizedNetUsdTotal = new Counter({
      name: 'packbot_model_realized_net_usd_total',
      help: "What the strategy's resolved orders returned (sell-backs, sales net of fee, sealed packs at the strategy's worth), USD, before their price",
      labelNames: ['account', 'strategy'] as const,
      registers,
    });
    this.gapZscore = new Gauge({
      name: 'packbot_model_gap_zscore',
      help: "Realized minus expected over the gap's standard error, current strategy version, by part (total, sell_back, listing, held)",
      labelNames: ['account', 'strategy', 'part'] as const,
      registers,
    });
    this.resolvedPacks = new Gauge({
      name: 'packbot_model_resolved_packs',
      help: "Packs of the current strategy version whose pull's outcome is in (sold back, listing sold or ended, sealed pack held)",
      labelNames: ['account', 'strategy'] as const,
      registers,
    });
  }

  update(account: string, s: ModelSeries): void {
    const labels = { account: safe(account), strategy: safe(s.strategy) };
    const before = this.current.get(labels.account);
    if (before !== undefined && before !== labels.strategy) {
      // Another strategy now: its predecessor's gauges go (its counters stay, as counters do).
      for (const part of MODEL_ZSCORE_PARTS) this.gapZscore.remove({ ...labels, strategy: before, part });
      this.resolvedPacks.remove({ ...labels, strategy: before });
    }
    this.current.set(labels.account, labels.strategy);
    const key = `${labels.account}\u0000${labels.strategy}`;
    const t = this.totals.get(key) ?? { expected: 0, realized: 0 };
    // Totals from the ledger only grow (orders resolve, never un-resolve): add what is new.
    if (s.resolvedExpectedCents > t.expected) {
      this.expectedNetUsdTotal.inc(labels, (s.resolvedExpectedCents - t.expected) / 100);
      t.expected = s.resolvedExpectedCents;
    } else this.expectedNetUsdTotal.inc(labels, 0);
    if (s.resolvedRealizedCents > t.realized) {
      this.realizedNetUsdTotal.inc(labels, (s.resolvedRealizedCents - t.realized) / 100);
      t.realized = s.resolvedRealizedCents;
    } else this.realizedNetUsdTotal.inc(labels, 0);
    this.totals.set(key, t);
    const f = s.figures;
    for (const part of MODEL_ZSCORE_PARTS)
      this.gapZscore.set({ ...labels, part }, zOf(part === 'total' ? f.total : f.parts[part]) ?? 0);
    this.resolvedPacks.set(labels, f.resolvedPacks);
  }
}
