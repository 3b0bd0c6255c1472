/**
 * The read operations of the simulator: the pack catalog and a pack's pool, the shop, an account's
 * vault, its account and limits, the key's identity, and the public purchase report. None changes
 * the state (beyond the background dynamics every request applies first).
 */
import { NotFoundError } from '../api/errors.js';
import {
  DEFAULT_CATEGORY,
  DEFAULT_RISK_LEVEL,
  PAGE_LIMITS,
  REPORT_DEFAULT_WINDOW_MS,
  REPORT_MAX_WINDOW_MS,
} from '../api/rules.js';
import type {
  Account,
  Identity,
  PackList,
  PackListQuery,
  PackPool,
  PackPoolQuery,
  PurchaseReportPage,
  PurchaseReportQuery,
  ShopCardsPage,
  ShopCardsQuery,
  VaultEntry,
  VaultPage,
  VaultQuery,
} from '../api/schemas.js';
import { nextUtcMidnight } from '../core/clock.js';
import { type Cents, toUsd } from '../core/money.js';
import type { Caller } from './auth.js';
import { offerAt } from './buyback.js';
import { type MarketContext, now } from './context.js';
import {
  bandWeight,
  type CardRec,
  cardValue,
  chaseActive,
  drawable,
  expectedValueCents,
  type PoolState,
  purchasablePool,
  shopPrice,
  totalWeight,
} from './inventory.js';
import { nextPurchaseAt, packsToday } from './limits.js';
import { reportRows } from './report-log.js';
import { stamp } from './server-time.js';
import * as v from './validate.js';
import { vaultHoldings } from './vault-order.js';
import { cardWire, sealedAsCard } from './wire.js';
import type { Rules } from './world-schema.js';

const byId = (a: CardRec, b: CardRec): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function listPacks(ctx: MarketContext, q: PackListQuery): PackList {
  const category = q.category ?? DEFAULT_CATEGORY;
  const t = now(ctx);
  const packs = ctx.s.inv.pools
    .filter((p) => p.category === category && p.spec.purchasable)
    .map((p) => {
      const available = p.spec.available && drawable(p, t);
      return {
        pack_type: p.spec.pack_type,
        name: p.spec.name,
        price: toUsd(p.priceCents),
        available,
        ...(available ? {} : { reason: p.spec.reason ?? 'out of stock' }),
        max_quantity: p.spec.max_quantity,
        risk_levels: [...p.spec.risk_levels],
      };
    });
  return { category, packs };
}

export function getPackPool(ctx: MarketContext, q: PackPoolQuery): PackPool {
  const s = ctx.s;
  const packType = q.pack_type;
  const category = q.category ?? DEFAULT_CATEGORY;
  const risk = q.risk_level ?? DEFAULT_RISK_LEVEL;
  const pool = purchasablePool(s.inv, category, packType);
  if (!pool) throw new NotFoundError(`no pack '${packType}' that can be bought in category '${category}'`);
  if (!pool.spec.risk_levels.includes(risk))
    throw v.bad(`risk_level '${risk}' is not offered by this pack (${pool.spec.risk_levels.join(', ')})`);
  const t = now(ctx);
  const total = totalWeight(pool, risk);
  const cards: { c: CardRec; v: Cents; bucket: string }[] = [];
  const bands = pool.bands.map((b) => {
    const w = bandWeight(b, risk);
    if (w > 0)
      for (let i = 0; i < b.bag.count; i++) {
        const c = s.inv.cards[b.bag.at(i)]!;
        cards.push({ c, v: cardValue(s.inv, c), bucket: b.spec.bucket_id });
      }
    return {
      bucket_id: b.spec.bucket_id,
      label: b.label,
      min_value: toUsd(b.minCents),
      max_value: toUsd(b.maxCents),
      odds: w > 0 ? w / total : 0,
      is_consolation: b.spec.is_consolation,
      hittable_cards: w > 0 ? b.bag.count : 0,
    };
  });
  cards.sort((a, b) => b.v - a.v || byId(a.c, b.c));
  const ch = pool.chase;
  const chase =
    ch && chaseActive(pool, t)
      ? {
          card: cardWire(s.inv, s.inv.cards[ch.slot]!, s.world.rules),
          probability: ch.probability,
          odds_label: ch.oddsLabel,
          label: ch.label,
          ends_at: ch.endsAt === null ? null : stamp(s.world.rules, ch.endsAt),
        }
      : null;
  return {
    pack_type: pool.spec.pack_type,
    name: pool.spec.name,
    category,
    risk_level: risk,
    price: toUsd(pool.priceCents),
    available: pool.spec.available && drawable(pool, t),
    expected_value: toUsd(Math.round(expectedValueCents(s.inv, pool, risk, t))),
    bands,
    chase,
    total_cards: totalCards(s.world.rules.pool_total_cards, pool, cards.length, chase !== null),
    cards: cards.map((x) => ({
      ...(x.c.kind === 'sealed' ? sealedAsCard(s.inv, x.c) : cardWire(s.inv, x.c, s.world.rules)),
      bucket_id: x.bucket,
    })),
  };
}

/**
 * A pool's `total_cards` (the spec names it, nothing more): the cards listed, every card of the
 * pack's bands at any risk level, or the listed ones and an active chase.
 */
function totalCards(
  mode: Rules['pool_total_cards'],
  pool: PoolState,
  listed: number,
  chaseShown: boolean,
): number {
  if (mode === 'listed') return listed;
  if (mode === 'listed_and_chase') return listed + (chaseShown ? 1 : 0);
  let all = 0;
  for (const b of pool.bands) all += b.bag.count;
  return all;
}

export function listShopCards(ctx: MarketContext, q: ShopCardsQuery): ShopCardsPage {
  const s = ctx.s;
  const category = q.category ?? DEFAULT_CATEGORY;
  const page = q.page ?? 1;
  const perPage = q.per_page ?? PAGE_LIMITS.shopCards.default;
  const all = [...s.inv.shop[category]].map((slot) => s.inv.cards[slot]!);
  all.sort(byId);
  const slice = all.slice((page - 1) * perPage, page * perPage);
  return {
    category,
    page,
    per_page: perPage,
    total: all.length,
    cards: slice.map((c) => ({
      ...cardWire(s.inv, c, s.world.rules),
      price: toUsd(shopPrice(s.inv, c)),
      sale_status: s.world.rules.shop_sale_status,
    })),
  };
}

export function getVault(ctx: MarketContext, caller: Caller, q: VaultQuery): VaultPage {
  const s = ctx.s;
  const rules = s.world.rules;
  const category = q.category ?? DEFAULT_CATEGORY;
  const page = q.page ?? 1;
  const perPage = q.per_page ?? PAGE_LIMITS.vault.default;
  const t = now(ctx);
  const held = vaultHoldings(s, caller.account!.id, category);
  const slice = held.slice((page - 1) * perPage, page * perPage);
  return {
    category,
    page,
    per_page: perPage,
    total: held.length,
    cards: slice.map(({ c, acq }): VaultEntry => {
      const value = cardValue(s.inv, c);
      const pulledAt =
        acq.kind === 'pull' || rules.purchased_card_pulled_at === 'purchase_time'
          ? stamp(rules, acq.at)
          : null;
      const head = { card_id: c.id, pull_id: acq.id, pulled_at: pulledAt, acquired_at: stamp(rules, acq.at) };
      // A sealed pack (shown when `rules.vault_sealed_packs`): no offer, since it cannot be sold back.
      if (c.kind === 'sealed')
        return { ...head, item: sealedAsCard(s.inv, c), value: toUsd(value), listed: false, buyback: null };
      const offer = offerAt(acq, value, t, rules);
      return {
        ...head,
        item: cardWire(s.inv, c, rules),
        value: toUsd(value),
        listed: c.loc === 'listed',
        buyback:
          c.loc === 'listed'
            ? null
            : {
                amount: toUsd(offer.amountCents),
                rate: offer.rate,
                basis_value: toUsd(offer.basisCents),
                locked_value_until: offer.lockedUntil === null ? null : stamp(rules, offer.lockedUntil),
              },
      };
    }),
  };
}

export function getAccount(ctx: MarketContext, caller: Caller): Account {
  const a = caller.account!;
  const k = caller.key;
  const t = now(ctx);
  const used = packsToday(a, t);
  return {
    username: a.username,
    balance: toUsd(a.balanceCents),
    limits: {
      packs_today: used,
      max_packs_per_day: k.maxPacksPerDay,
      packs_left_today: Math.max(0, k.maxPacksPerDay - used),
      resets_at: stamp(ctx.s.world.rules, nextUtcMidnight(t)),
      min_seconds_between_purchases: k.minSecondsBetween,
      next_purchase_at: stamp(
        ctx.s.world.rules,
        Math.max(t, nextPurchaseAt(k.lastPurchaseAt, k.minSecondsBetween, t)),
      ),
    },
  };
}

export function getIdentity(caller: Caller): Identity {
  const a = caller.account;
  return {
    key: { name: caller.key.name, scopes: [...caller.key.scopes] },
    linked: a !== null,
    account: a
      ? {
          id: a.id,
          username: a.username,
          profile_url: `https://sim.packbot.invalid/u/${encodeURIComponent(a.username)}`,
        }
      : null,
  };
}

export function getPurchaseReport(ctx: MarketContext, q: PurchaseReportQuery): PurchaseReportPage {
  const t = now(ctx);
  const untilQ = v.timestamp(q.until, 'until');
  const sinceQ = v.timestamp(q.since, 'since');
  const until = untilQ ?? t;
  const since = sinceQ ?? until - REPORT_DEFAULT_WINDOW_MS;
  if (since > until) throw v.bad('inverted window: since is after until');
  if (until - since > REPORT_MAX_WINDOW_MS) throw v.bad('window is longer than 31 days');
  const page = q.page ?? 1;
  const perPage = q.per_page ?? PAGE_LIMITS.purchaseReport.default;
  const rows = reportRows(ctx.s.report, since, until);
  const pools = ctx.s.inv.pools;
  return {
    since: stamp(ctx.s.world.rules, since),
    until: stamp(ctx.s.world.rules, until),
    page,
    per_page: perPage,
    total: rows.length,
    pulls: rows.slice((page - 1) * perPage, page * perPage).map((r) => ({
      user_id: r.userId,
      created_at: stamp(ctx.s.world.rules, r.at),
      amount: toUsd(r.amountCents),
      source: pools[r.pool]!.spec.report_source ?? pools[r.pool]!.category,
      pack_type: pools[r.pool]!.spec.pack_type,
    })),
  };
}
