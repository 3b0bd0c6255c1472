/**
 * What an account does with the cards it holds: sell them back to the house (per item: sold,
 * already sold, or failed with a reason) and list them on the marketplace or take them off. The
 * statuses of a request refused as a whole are the world's (`rules.holdings_errors`, wire-errors.ts).
 */
import { BadRequestError } from '../api/errors.js';
import type { Operation } from '../api/operations.js';
import type {
  CreateListingRequest,
  DeleteListingRequest,
  DelistResponse,
  Listing,
  SellBackRequest,
  SellBackResponse,
  SellBackResult,
} from '../api/schemas.js';
import { toCents, toUsd } from '../core/money.js';
import type { Caller } from './auth.js';
import { offerAt } from './buyback.js';
import { type MarketContext, now } from './context.js';
import { type CardRec, cardValue } from './inventory.js';
import { type Input, parseRequest } from './request.js';
import { type AccountState, record } from './state.js';
import { holdingsError } from './wire-errors.js';

type HoldingsOp = Extract<Operation, 'sellBack' | 'createListing' | 'deleteListing'>;

/** The request of a sell-back, listing or delisting, read with its schema (a refusal otherwise). */
export function holdingsInput<O extends HoldingsOp>(
  ctx: MarketContext,
  op: O,
  req: { body?: unknown; query?: Record<string, unknown> | undefined },
): Input<O> {
  try {
    return parseRequest(op, req);
  } catch (e) {
    if (e instanceof BadRequestError) throw holdingsError(ctx.s.world.rules, 'invalid', e.message);
    throw e;
  }
}

export function sellBack(ctx: MarketContext, caller: Caller, input: SellBackRequest): SellBackResponse {
  const s = ctx.s;
  const items = input.items;
  const account = caller.account!;
  const t = now(ctx);
  let total = 0;
  const results = items.map((it): SellBackResult => {
    const failed = (error: string): SellBackResult => ({
      card_id: it.card_id,
      pull_id: it.pull_id,
      status: 'failed',
      error,
    });
    const c = s.inv.byId.get(it.card_id);
    if (!c) return failed('unknown card');
    const acq = s.acquisitions.get(it.pull_id);
    if (!acq) return failed('unknown pull_id');
    if (acq.slot !== c.slot) return failed('pull_id does not belong to this card');
    if (acq.accountId !== account.id) return failed('not the holder of this card');
    if (acq.sale)
      return {
        card_id: it.card_id,
        pull_id: it.pull_id,
        status: 'already_sold',
        transaction_id: acq.sale.transactionId,
        payout_amount: toUsd(acq.sale.payoutCents),
        payout_rate: acq.sale.rate,
      };
    if (c.kind === 'sealed') return failed('sealed packs cannot be sold back');
    if (c.owner !== account.id || c.acquisition !== acq.id) return failed('not the holder of this card');
    if (c.loc === 'listed') return failed('card is listed on the marketplace; delist it first');
    if (c.loc === 'shipped') return failed('card has been shipped');
    if (c.loc !== 'vault') return failed('card is not in the vault');
    const offer = offerAt(acq, cardValue(s.inv, c), t, s.world.rules);
    const txn = s.ids.uuid();
    record(s, account.id, t, 'sell_back', offer.amountCents, txn);
    acq.sale = { transactionId: txn, payoutCents: offer.amountCents, rate: offer.rate, at: t };
    c.loc = 'sold_back';
    c.owner = null;
    total += offer.amountCents;
    return {
      card_id: it.card_id,
      pull_id: it.pull_id,
      status: 'sold',
      transaction_id: txn,
      payout_amount: toUsd(offer.amountCents),
      payout_rate: offer.rate,
    };
  });
  return { total_paid: toUsd(total), remaining_balance: toUsd(account.balanceCents), results };
}

/**
 * A card the account holds in its vault, listed or not (not held otherwise). A sealed pack the
 * vault shows (`rules.vault_sealed_packs`) is held, but cannot be listed.
 */
function heldCard(ctx: MarketContext, account: AccountState, cardId: string): CardRec {
  const rules = ctx.s.world.rules;
  const c = ctx.s.inv.byId.get(cardId);
  if (c?.owner === account.id && c.loc === 'sealed' && rules.vault_sealed_packs)
    throw holdingsError(rules, 'invalid', 'sealed packs cannot be listed');
  if (!c || c.owner !== account.id || (c.loc !== 'vault' && c.loc !== 'listed'))
    throw holdingsError(rules, 'not_held', `card '${cardId}' is not in your vault`);
  return c;
}

export function createListing(ctx: MarketContext, caller: Caller, input: CreateListingRequest): Listing {
  const s = ctx.s;
  const cardId = input.card_id;
  const priceUsd = input.price;
  const c = heldCard(ctx, caller.account!, cardId);
  const rules = s.world.rules;
  if (c.loc === 'listed')
    throw holdingsError(rules, 'conflict', 'card is already listed; delist it first to change the price');
  const price = toCents(priceUsd);
  const min = toCents(s.world.rules.marketplace_min_price);
  const max = Math.floor(cardValue(s.inv, c) * s.world.rules.max_listing_multiple);
  if (price <= min)
    throw holdingsError(
      rules,
      'invalid',
      `price must be above the marketplace minimum of $${toUsd(min).toFixed(2)}`,
    );
  if (price > max)
    throw holdingsError(
      rules,
      'invalid',
      `price must be at most ${s.world.rules.max_listing_multiple} times the market value ($${toUsd(max).toFixed(2)})`,
    );
  const listingId = s.ids.uuid();
  c.loc = 'listed';
  c.listing = {
    id: listingId,
    priceCents: price,
    title: c.name,
    seller: caller.account!.id,
    createdAt: now(ctx),
  };
  s.inv.listings.add(c.slot);
  return { listing_id: listingId, card_id: c.id, price: toUsd(price), title: c.name };
}

export function deleteListing(
  ctx: MarketContext,
  caller: Caller,
  input: DeleteListingRequest,
): DelistResponse {
  const cardId = input.card_id;
  const c = heldCard(ctx, caller.account!, cardId);
  if (c.loc !== 'listed') throw holdingsError(ctx.s.world.rules, 'conflict', 'card is not listed');
  ctx.s.inv.listings.delete(c.slot);
  c.listing = null;
  c.loc = 'vault';
  return { card_id: c.id, delisted: true };
}
