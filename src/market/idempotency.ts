/**
 * The idempotency state machine of orders (pack and card purchases): one order per account and
 * Idempotency-Key. A key is taken while its order runs (a retry gets 409 in progress), keeps the
 * answer once finished (a retry replays it, marked `idempotent_replay`), and is released when the
 * order fails (nothing was kept, so a retry runs again). A key reused for a different order is
 * refused. The fingerprint is of the normalised input, so a retry spelling a default out matches.
 */
import { IdempotencyInProgressError, IdempotencyKeyReusedError, ServerError } from '../api/errors.js';
import { ENDPOINTS, type Operation } from '../api/operations.js';
import { type MarketContext, sync } from './context.js';
import type { Order } from './state.js';

export type OrderOp = Extract<Operation, 'purchasePacks' | 'purchaseCard'>;

/**
 * Runs `place` (at the synced now) at most once for `accountId` and `key`, after the time the
 * service takes to answer (`rules.pack_purchase_answer_ms`, `card_purchase_answer_ms`) and the
 * endpoint's injected latency; returns its answer or the stored one. The order is running all that
 * time, and commits at its end: a retry meanwhile gets 409, a save leaves it out.
 */
export async function runOrder<R extends object>(
  ctx: MarketContext,
  op: OrderOp,
  accountId: string,
  key: string,
  input: unknown,
  place: (now: number) => R,
): Promise<R> {
  const id = `${accountId}\u0000${key}`;
  const fingerprint = JSON.stringify([op, input]);
  const existing = ctx.s.orders.get(id);
  if (existing) {
    if (existing.fingerprint !== fingerprint)
      throw new IdempotencyKeyReusedError('this Idempotency-Key was used for a different order');
    if (existing.state === 'running')
      throw new IdempotencyInProgressError(
        'an order with this Idempotency-Key is still running; retry shortly',
      );
    return { ...structuredClone(existing.response as R), idempotent_replay: true };
  }
  const state = ctx.s;
  const order: Order = { state: 'running', fingerprint, response: undefined };
  state.orders.set(id, order);
  try {
    const rules = state.world.rules;
    const answerMs = op === 'purchasePacks' ? rules.pack_purchase_answer_ms : rules.card_purchase_answer_ms;
    const latency = answerMs + ctx.faults.latencyMs(ENDPOINTS[op]);
    if (latency > 0) await ctx.clock.sleep(latency);
    if (ctx.s !== state) throw new ServerError('the simulator was reset while the order ran');
    const response = place(sync(ctx));
    order.state = 'finished';
    order.response = response;
    return structuredClone(response);
  } catch (e) {
    // A failed order is refunded (nothing was kept) and releases its key: a retry runs again.
    state.orders.delete(id);
    throw e;
  }
}

/** The account and Idempotency-Key of an order's id (as `runOrder` stores it). */
export function orderKey(id: string): { account: string; key: string } {
  const [account, key] = id.split('\u0000') as [string, string];
  return { account, key };
}
