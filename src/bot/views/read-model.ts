/**
 * The running bot as the read API sees it (`BotView`, defined in src/obs/bot-view.ts): answers
 * built from the ledger and each account bot's last reads, nothing written. Money leaves as USD,
 * times as ISO strings (docs/api.md).
 */

import { iso } from '../../core/clock.js';
import { toUsd } from '../../core/money.js';
import type {
  AccountStatus,
  BotEvent,
  ListingView,
  PauseInfo,
  PnlResponse,
  PullView,
  StatusResponse,
} from '../../obs/api-schemas.js';
import type { BotView, ReadQuery } from '../../obs/bot-view.js';
import type { KillSwitch, PauseStatus } from '../../obs/kill-switch.js';
import type { Ledger, PullRow } from '../../store/ledger.js';
import { ledgerModel } from '../../store/model-orders.js';
import type { OnTheWire } from '../../store/order-facts.js';
import { repriceSchedule, sellBackDeadline } from '../../strategy/decide-listing.js';
import type { AccountBot } from '../account/account-bot.js';
import { listingInput } from '../selling/listing-input.js';
import { accountStatusOf } from './account-status.js';
import { ordersOf, orderView } from './order-view.js';

export interface RunnerViewOptions {
  mode: 'live' | 'dry-run';
  embedded: boolean;
  ledger: Ledger;
  killSwitch: KillSwitch;
  bots: readonly AccountBot[];
  now: () => number;
}

const isoOrNull = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined || !Number.isFinite(ms) ? null : iso(ms);

export function pauseInfo(s: PauseStatus): PauseInfo {
  return {
    paused: s.paused,
    reasons: [...s.reasons],
    file: s.file ?? null,
    paused_at: isoOrNull(s.pausedAt),
    by: s.by ?? null,
    note: s.note ?? null,
  };
}

interface CardExtras {
  grade: string | null;
  image: string | null;
}

interface Cursor {
  pullSeq: number;
  intentsAt: number;
  pause: string;
  status: string;
}

export class RunnerView implements BotView {
  /** checkout id → pull id → image and grade, from the order's stored response. */
  private readonly extras = new Map<string, Map<string, CardExtras>>();

  /** A request some account's executor has on the wire: not in doubt (order-facts.ts). */
  private readonly onTheWire: OnTheWire;

  constructor(private readonly o: RunnerViewOptions) {
    this.onTheWire = (key) => o.bots.some((b) => b.onTheWire(key));
  }

  private bots(q: ReadQuery): readonly AccountBot[] {
    return q.account === undefined ? this.o.bots : this.o.bots.filter((b) => b.name === q.account);
  }

  status(): StatusResponse {
    const now = this.o.now();
    return {
      now: iso(now),
      mode: this.o.mode,
      embedded: this.o.embedded,
      pause: pauseInfo(this.o.killSwitch.status()),
      accounts: this.o.bots.map((b) => this.accountStatus(b, now)),
    };
  }

  private accountStatus(bot: AccountBot, now: number): AccountStatus {
    const snap = bot.snapshot();
    return accountStatusOf({
      ledger: this.o.ledger,
      name: bot.name,
      strategy: snap.strategy,
      now,
      killSwitch: this.o.killSwitch.status(),
      totals: snap.totals,
      ...(snap.account ? { view: snap.account } : {}),
      waiting: snap.lastWait === '' ? null : snap.lastWait,
      cards: bot.cards,
      onTheWire: this.onTheWire,
    });
  }

  /** Balance and cash P&L at every change, at most `limit` points (the latest kept). */
  pnl(q: ReadQuery): PnlResponse {
    const { ledger } = this.o;
    const limit = q.limit ?? 500;
    return {
      accounts: this.bots(q).map((b) => {
        const balances = ledger.balanceHistory(b.name);
        const flows = ledger.cashFlows(b.name);
        const points: { at: number; balance: number | null; net: number }[] = [];
        let i = 0;
        let j = 0;
        let balance: number | null = null;
        let net = 0;
        while (i < balances.length || j < flows.length) {
          const bAt = balances[i]?.at ?? Number.POSITIVE_INFINITY;
          const fAt = flows[j]?.at ?? Number.POSITIVE_INFINITY;
          const at = Math.min(bAt, fAt);
          while (i < balances.length && balances[i]!.at === at) balance = balances[i++]!.balanceCents;
          while (j < flows.length && flows[j]!.at === at) net += flows[j++]!.cents;
          points.push({ at, balance, net });
        }
        return {
          name: b.name,
          points: thin(points, limit).map((p) => ({
            at: iso(p.at),
            balance_usd: p.balance === null ? null : toUsd(p.balance),
            cash_pnl_usd: toUsd(p.net),
          })),
          model: ledgerModel(ledger, { account: b.name }, this.o.now()),
        };
      }),
    };
  }

  pulls(q: ReadQuery) {
    const rows = this.o.ledger
      .recentPulls(q.account === undefined ? (q.limit ?? 50) : 1000)
      .filter((p) => q.account === undefined || p.account === q.account)
      .slice(0, q.limit ?? 50);
    return { pulls: rows.map((p) => this.pullView(p)) };
  }

  pullView(p: PullRow & { seq: number }): PullView {
    const { ledger } = this.o;
    const last = ledger.decisionsFor(p.pullId).at(-1);
    const extra = this.cardExtras(p);
    return {
      seq: p.seq,
      pull_id: p.pullId,
      account: p.account,
      card_id: p.cardId,
      name: p.name,
      kind: p.kind,
      grade: extra.grade,
      value_usd: toUsd(p.valueCents),
      image_url: extra.image,
      rarity: p.rarityTier,
      is_chase: p.isChase,
      pulled_at: iso(p.pulledAt),
      status: p.status,
      decision: last
        ? {
            action: last.action,
            reason: last.reason,
            price_usd: last.priceCents === null ? null : toUsd(last.priceCents),
            at: iso(last.decidedAt),
          }
        : null,
      outcome: this.outcome(p),
    };
  }

  private outcome(p: PullRow): PullView['outcome'] {
    const { ledger } = this.o;
    if (p.status === 'sold') {
      const sale = ledger.saleOf(p.pullId);
      if (sale) return { kind: 'sold_back', amount_usd: toUsd(sale.payoutCents), at: iso(sale.at) };
      const l = ledger.listingOfPull(p.pullId);
      return {
        kind: 'listing_filled',
        amount_usd: l?.proceedsCents == null ? null : toUsd(l.proceedsCents),
        at: isoOrNull(l?.filledAt),
      };
    }
    if (p.status === 'listed') {
      const l = ledger.listingOfPull(p.pullId);
      return { kind: 'listed', amount_usd: l ? toUsd(l.priceCents) : null, at: isoOrNull(l?.createdAt) };
    }
    if (p.status === 'held') return { kind: 'held', amount_usd: null, at: iso(p.statusAt) };
    if (p.status === 'gone' || p.status === 'shipped')
      return { kind: 'gone', amount_usd: null, at: iso(p.statusAt) };
    return { kind: 'pending', amount_usd: null, at: null };
  }

  /** Image and grade are not ledger columns: read once from the order's stored response. */
  private cardExtras(p: PullRow): CardExtras {
    let byPull = this.extras.get(p.checkoutId);
    if (!byPull) {
      byPull = new Map();
      const response = this.o.ledger.intentOfOrder(p.checkoutId)?.responseJson;
      if (response) {
        try {
          const r = JSON.parse(response) as {
            pulls?: { pull_id?: string; item?: Record<string, unknown> }[];
          };
          for (const pull of r.pulls ?? []) {
            const item = pull.item ?? {};
            const str = (k: string) =>
              typeof item[k] === 'string' && item[k] !== '' ? (item[k] as string) : null;
            const rank = typeof item.grading_rank === 'number' ? String(item.grading_rank) : null;
            const grade = [str('grading_company'), rank].filter(Boolean).join(' ') || null;
            byPull.set(String(pull.pull_id), {
              grade,
              image: str('image_url') ?? str('front_image') ?? str('render_image'),
            });
          }
        } catch {
          // a response we cannot read: no extras
        }
      }
      if (this.extras.size > 2000) this.extras.clear();
      this.extras.set(p.checkoutId, byPull);
    }
    return byPull.get(p.pullId) ?? { grade: null, image: null };
  }

  orders(q: ReadQuery) {
    return ordersOf(this.o.ledger, q, this.onTheWire);
  }

  /**
   * Each active listing as the listing watch sees it (`listingInput`: the card's value at the
   * watch's last vault read), so the schedule and `sell_back_at` are what the watch will do.
   */
  listings(q: ReadQuery) {
    const { ledger } = this.o;
    const now = this.o.now();
    const out: ListingView[] = [];
    for (const bot of this.bots(q)) {
      const strategy = bot.strategy;
      for (const l of ledger.activeListings(bot.name)) {
        const pull = l.pullId ? ledger.getPull(l.pullId) : undefined;
        const { view, valueCents } = listingInput(l, pull, bot.listingMarks.get(l.cardId));
        const schedule: ListingView['schedule'] = repriceSchedule(view, strategy, now).map((step) => ({
          at: iso(step.at),
          markup: Math.round(step.markup * 100) / 100,
          price_usd: valueCents === null || step.priceCents === null ? null : toUsd(step.priceCents),
        }));
        out.push({
          listing_id: l.listingId,
          account: l.account,
          card_id: l.cardId,
          pull_id: l.pullId,
          name: pull?.name ?? l.cardId,
          price_usd: toUsd(l.priceCents),
          value_usd: valueCents === null ? null : toUsd(valueCents),
          listed_at: iso(l.createdAt),
          repriced_at: isoOrNull(l.repricedAt),
          schedule,
          sell_back_at: iso(sellBackDeadline(view, strategy, now)),
          lock_ends_at: isoOrNull(view.lockedValueUntil),
        });
      }
    }
    return { listings: out };
  }

  scores(q: ReadQuery) {
    return {
      accounts: this.bots(q).map((b) => {
        const s = b.snapshot().scores;
        return {
          name: b.name,
          scored_at: isoOrNull(s?.at),
          decision: s
            ? {
                action: s.decision.action,
                reason:
                  s.decision.action === 'open'
                    ? `open ${s.decision.quantity} × ${s.decision.pack_type} (${s.decision.risk_level})`
                    : s.decision.reason,
              }
            : null,
          rows: (s?.rows ?? []).map((r) => ({
            category: r.category,
            pack_type: r.pack_type,
            name: r.name,
            risk_level: r.risk_level,
            price_usd: r.list_price ?? r.price,
            ev_usd: r.ev,
            ev_ratio: r.ev_ratio,
            realized_ev_ratio: r.realized_ev_ratio,
            p_loss: r.p_loss,
            decision: r.decision.action,
            reason:
              r.decision.action === 'open'
                ? `worth opening (${r.decision.quantity} at most)`
                : r.decision.reason,
          })),
        };
      }),
    };
  }

  /** New pulls, orders that moved, pause changes and a changed status since `cursor`. */
  changes(cursor: unknown): { cursor: unknown; events: BotEvent[] } {
    const { ledger, killSwitch } = this.o;
    const ks = killSwitch.status();
    const pauseKey = `${ks.reasons.join(',')}|${ks.pausedAt ?? ''}`;
    const statusKey = `${ledger.latestActivityAt()}|${pauseKey}|${this.o.bots
      .map((b) => `${b.lastWait}|${b.lastScores?.at ?? ''}`)
      .join('|')}`;
    const prev = cursor as Cursor | undefined;
    const latestPull = ledger.recentPulls(1)[0]?.seq ?? 0;
    const latestIntent = ledger.recentIntents(1)[0];
    const next: Cursor = {
      pullSeq: latestPull,
      intentsAt: Math.max(
        prev?.intentsAt ?? 0,
        ...ledger.intentsUpdatedSince(prev?.intentsAt ?? 0, 1).map((i) => i.updatedAt),
        latestIntent?.updatedAt ?? 0,
      ),
      pause: pauseKey,
      status: statusKey,
    };
    if (!prev) return { cursor: next, events: [] };
    const events: BotEvent[] = [];
    for (const i of ledger.intentsUpdatedSince(prev.intentsAt, 50).reverse())
      events.push({ type: 'order', order: orderView(i, ledger, this.onTheWire) });
    for (const p of ledger.recentPulls(100, prev.pullSeq).reverse())
      events.push({ type: 'pull', pull: this.pullView(p) });
    if (prev.pause !== pauseKey) events.push({ type: 'pause', pause: pauseInfo(ks) });
    if (prev.status !== statusKey) events.push({ type: 'status', status: this.status() });
    return { cursor: next, events };
  }
}

/** At most `limit` points: the latest always, evenly thinned before it. */
function thin<T>(points: T[], limit: number): T[] {
  if (points.length <= limit) return points;
  const step = points.length / limit;
  const out: T[] = [];
  for (let k = 0; k < limit - 1; k++) out.push(points[Math.floor(k * step)]!);
  out.push(points.at(-1)!);
  return out;
}

/** An account's card buying for the status (the card loop's own state when the bot runs). */
