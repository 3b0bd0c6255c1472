/**
 * The two orders of the simulator: a pack purchase (all or nothing: every pull is kept, or every
 * card goes back and the order is refunded) and a card purchase from the shop or another user's
 * listing. Both run inside the idempotency state machine (idempotency.ts), at its synced now.
 */
import {
  CardNoLongerAvailableError,
  NotFoundError,
  OrderRefundedError,
  OwnListingError,
  PriceChangedError,
  ServerError,
} from '../api/errors.js';
import { ENDPOINTS } from '../api/operations.js';
import type {
  CardPurchaseRequest,
  CardPurchaseResponse,
  PackPurchaseResponse,
  Pull,
  PullBuyback,
} from '../api/schemas.js';
import { toCents, toUsd } from '../core/money.js';
import { freshEnds, lockEnds, sellBackOffer } from '../strategy/market-laws.js';
import type { Caller } from './auth.js';
import type { Acquisition } from './buyback.js';
import type { MarketContext } from './context.js';
import {
  cardValue,
  type Draw,
  drawable,
  drawPull,
  newDraw,
  purchasablePool,
  shopPrice,
  undoDraw,
} from './inventory.js';
import {
  cardDay,
  checkCardCaps,
  checkPackDaily,
  checkRate,
  countCard,
  countPacks,
  packsToday,
} from './limits.js';
import { listingSold } from './proceeds.js';
import { recordOpening } from './report-log.js';
import type { PackPurchaseInput } from './request.js';
import { stamp } from './server-time.js';
import { record } from './state.js';
import * as v from './validate.js';
import { cardWire, sealedWire } from './wire.js';

export function purchasePacks(
  ctx: MarketContext,
  caller: Caller,
  req: PackPurchaseInput,
  now: number,
): PackPurchaseResponse {
  const s = ctx.s;
  const account = caller.account!;
  const key = caller.key;
  const pool = purchasablePool(s.inv, req.category, req.pack_type);
  if (!pool) throw v.bad(`unknown pack_type '${req.pack_type}' in category '${req.category}'`);
  if (!pool.spec.available || !drawable(pool, now))
    throw v.bad(`pack '${req.pack_type}' is not available: ${pool.spec.reason ?? 'out of stock'}`);
  if (req.quantity > pool.spec.max_quantity)
    throw v.bad(
      pool.spec.max_quantity === 1
        ? `pack '${req.pack_type}' cannot be bought in multiples (max_quantity 1)`
        : `quantity ${req.quantity} is above this pack's max_quantity ${pool.spec.max_quantity}`,
    );
  if (!pool.spec.risk_levels.includes(req.risk_level))
    throw v.bad(
      `risk_level '${req.risk_level}' is not offered by this pack (${pool.spec.risk_levels.join(', ')})`,
    );
  const used = packsToday(account, now);
  checkPackDaily(s.world.rules, key, used, req.quantity, now);
  checkRate(key.lastPurchaseAt, key.minSecondsBetween, now);
  const cost = pool.priceCents * req.quantity;
  if (account.balanceCents < cost)
    throw v.bad(
      `insufficient balance: the order costs $${toUsd(cost).toFixed(2)}, balance is $${toUsd(account.balanceCents).toFixed(2)}`,
    );

  const checkoutId = s.ids.uuid();
  record(s, account.id, now, 'pack_purchase', -cost, checkoutId);
  const uncount = countPacks(key, account, used, req.quantity, now);

  const failAt = ctx.faults.roll(ENDPOINTS.purchasePacks, 'error') ? s.draws.int(req.quantity) : -1;
  const draws: Draw[] = [];
  let failed = false;
  for (let i = 0; i < req.quantity; i++) {
    // Each pull keeps its draw until the order is booked (or undone): one object per pull here.
    const d = newDraw();
    if (i === failAt || !drawPull(s.inv, pool, req.risk_level, now, s.draws, d)) {
      failed = true;
      break;
    }
    draws.push(d);
  }
  if (failed) {
    // All or nothing: put every pulled card back, refund, and give the limit slots back.
    for (const d of draws.reverse()) undoDraw(s.inv, pool, d);
    record(s, account.id, now, 'pack_refund', cost, checkoutId);
    uncount();
    throw new OrderRefundedError('a pack failed to open; the whole order was refunded');
  }

  const rules = s.world.rules;
  const pulls: Pull[] = [];
  let totalValue = 0;
  let buybackNow = 0;
  let best: { pull_id: string; name: string; value: number } | null = null;
  let bestCents = -1;
  for (const d of draws) {
    const c = s.inv.cards[d.slot]!;
    const value = cardValue(s.inv, c);
    const pullId = s.ids.uuid();
    const acq: Acquisition = {
      id: pullId,
      kind: 'pull',
      slot: c.slot,
      accountId: account.id,
      at: now,
      valueCents: value,
      basisCents: value,
      sale: null,
    };
    s.acquisitions.set(pullId, acq);
    c.owner = account.id;
    c.acquisition = pullId;
    c.loc = c.kind === 'sealed' ? 'sealed' : 'vault';
    const band = d.band >= 0 ? pool.bands[d.band]! : undefined;
    const hit = {
      rarity_tier: band ? band.rarityTier : rules.chase_bucket,
      bucket: band ? band.spec.bucket_id : rules.chase_bucket,
      bucket_odds: d.odds,
      is_chase: !band,
      chase_label: band ? null : pool.chase!.label,
    };
    totalValue += value;
    let buyback: PullBuyback | null = null;
    if (c.kind === 'card') {
      // The offer now (fresh window) and right after it (locked), by the law of sell-back.
      const freshUntil = freshEnds(now, rules);
      const fresh = sellBackOffer('pull', now, value, value, now, rules);
      const after = sellBackOffer('pull', now, value, value, freshUntil + 1, rules);
      buybackNow += fresh.amountCents;
      buyback = {
        amount: toUsd(fresh.amountCents),
        rate: fresh.rate,
        valid_until: stamp(rules, freshUntil),
        after: {
          amount: toUsd(after.amountCents),
          rate: after.rate,
          valid_until: stamp(rules, lockEnds(now, rules)),
        },
      };
    }
    if (value > bestCents) {
      bestCents = value;
      best = { pull_id: pullId, name: c.name, value: toUsd(value) };
    }
    pulls.push(
      c.kind === 'sealed'
        ? {
            pull_id: pullId,
            kind: 'sealed_pack',
            item: sealedWire(c),
            value: toUsd(value),
            hit,
            buyback: null,
          }
        : {
            pull_id: pullId,
            kind: 'card',
            item: cardWire(s.inv, c, rules),
            value: toUsd(value),
            hit,
            buyback,
          },
    );
    if (rules.purchase_report_rows === 'per_pack')
      recordOpening(s.report, {
        at: now,
        userId: account.userId,
        amountCents: pool.priceCents,
        pool: pool.index,
        internal: account.internal,
      });
  }
  // The spec's report lists "completed pack purchases": a row per pack, or one per order.
  if (rules.purchase_report_rows === 'per_order')
    recordOpening(s.report, {
      at: now,
      userId: account.userId,
      amountCents: cost,
      pool: pool.index,
      internal: account.internal,
      packs: req.quantity,
    });
  return {
    checkout_id: checkoutId,
    pack_type: pool.spec.pack_type,
    category: pool.category,
    risk_level: req.risk_level,
    quantity: req.quantity,
    total_charged: toUsd(cost),
    remaining_balance: toUsd(account.balanceCents),
    summary: { total_value: toUsd(totalValue), buyback_now_total: toUsd(buybackNow), best_pull: best },
    pulls,
  };
}

const NO_LONGER_AVAILABLE = 'this card is no longer available (sold, pulled from a pack, or delisted)';

export function purchaseCard(
  ctx: MarketContext,
  caller: Caller,
  req: CardPurchaseRequest,
  now: number,
): CardPurchaseResponse {
  const s = ctx.s;
  const rules = s.world.rules;
  const account = caller.account!;
  const c = s.inv.byId.get(req.card_id);
  if (!c && s.inv.goneIds.has(req.card_id)) throw new CardNoLongerAvailableError(NO_LONGER_AVAILABLE);
  if (c?.kind !== 'card') throw new NotFoundError(`no card '${req.card_id}'`);
  const fromShop = c.loc === 'shop';
  if (!fromShop && c.loc !== 'listed' && c.loc !== 'listed_other')
    throw new CardNoLongerAvailableError(NO_LONGER_AVAILABLE);
  if (c.listing && c.listing.seller === account.id)
    throw new OwnListingError('this card is your own listing');
  const price = fromShop ? shopPrice(s.inv, c) : c.listing!.priceCents;
  const maxPrice = toCents(req.max_price);
  if (price > maxPrice) throw new PriceChangedError(c.id, toUsd(price), req.max_price);
  if (rules.card_purchase_speed_limited)
    checkRate(caller.key.lastCardPurchaseAt, caller.key.minSecondsBetween, now);
  const today = cardDay(account, now);
  checkCardCaps(rules, today, price);
  const fee = toCents(rules.card_fee);
  if (account.balanceCents < price + fee)
    throw v.bad(
      `insufficient balance: the card costs $${toUsd(price + fee).toFixed(2)} with the fee, balance is $${toUsd(account.balanceCents).toFixed(2)}`,
    );
  if (ctx.faults.roll(ENDPOINTS.purchaseCard, 'error')) throw new ServerError('injected server fault');

  const checkoutId = s.ids.uuid();
  const txn = s.ids.uuid();
  const valueNow = cardValue(s.inv, c);
  const listing = c.listing;
  record(s, account.id, now, 'card_purchase', -price, txn);
  if (fee > 0) record(s, account.id, now, 'card_fee', -fee, txn);
  if (listing) {
    s.inv.listings.delete(c.slot);
    if (listing.seller !== null) listingSold(s, listing.seller, listing.id, price, now);
    c.listing = null;
  } else s.inv.shop[c.category].delete(c.slot);
  countCard(caller.key, account, today, price, now);
  c.anchorCents = valueNow;
  c.anchorIndex = s.inv.index[c.category];
  c.loc = 'vault';
  c.owner = account.id;
  // How the vault and sell-back name the bought card is the world's choice (the spec: not shown).
  const pullId =
    rules.purchased_card_pull_id === 'transaction_id'
      ? txn
      : rules.purchased_card_pull_id === 'checkout_id'
        ? checkoutId
        : s.ids.uuid();
  c.acquisition = pullId;
  s.acquisitions.set(pullId, {
    id: pullId,
    kind: 'purchase',
    transactionId: txn,
    slot: c.slot,
    accountId: account.id,
    at: now,
    valueCents: valueNow,
    basisCents: Math.min(price, valueNow),
    sale: null,
  });
  const out: CardPurchaseResponse = {
    checkout_id: checkoutId,
    transaction_id: txn,
    card_id: c.id,
    source: listing ? 'listing' : 'shop',
    listing_id: listing ? listing.id : null,
    price: toUsd(price),
    fee: toUsd(fee),
    total_charged: toUsd(price + fee),
    remaining_balance: toUsd(account.balanceCents),
    item: cardWire(s.inv, c, rules),
  };
  if (ctx.faults.roll(ENDPOINTS.purchaseCard, 'needs_review')) out.needs_review = true;
  return out;
}
