/**
 * The books' gauges follow the ledger: set at start-up, and again when a reading books an
 * adjustment or credits a sale; a reading that changes nothing leaves them, without summing the
 * account's whole history again.
 */
import { describe, expect, it, vi } from 'vitest';
import { readBalance, showBooks } from '../../src/bot/selling/cash-books.js';
import { MINUTE_MS } from '../../src/core/clock.js';
import { contextOf, fixture } from './helpers.js';

async function gauge(g: { get(): Promise<{ values: { value: number }[] }> }): Promise<number | undefined> {
  return (await g.get()).values[0]?.value;
}

describe('the books gauges', () => {
  it('move with an adjustment, and are not recomputed by a reading that changes nothing', async () => {
    const f = fixture();
    const o = contextOf(f);
    showBooks(o);
    expect(await gauge(f.metrics.balanceAdjustmentsUsd)).toBe(0);
    const at = () => f.clock.now();
    readBalance(o, 100_00, 'account', at(), at());
    f.clock.advance(MINUTE_MS);
    // A deposit: nothing booked explains it.
    readBalance(o, 150_00, 'account', at(), at());
    expect(await gauge(f.metrics.balanceAdjustmentsUsd)).toBe(50);
    const fee = vi.spyOn(f.ledger, 'listingFeeRate');
    const adjustments = vi.spyOn(f.ledger, 'adjustments');
    f.clock.advance(MINUTE_MS);
    readBalance(o, 150_00, 'account', at(), at());
    expect(fee).not.toHaveBeenCalled();
    expect(adjustments).not.toHaveBeenCalled();
    // A withdrawal is booked and shown.
    f.clock.advance(MINUTE_MS);
    readBalance(o, 120_00, 'account', at(), at());
    expect(await gauge(f.metrics.balanceAdjustmentsUsd)).toBe(20);
  });
});
