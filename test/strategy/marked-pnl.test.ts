/**
 * The marked P&L's one definition (`markedPnlCents`): cash change + cards held and listed at their
 * sell-back value + sealed packs at `sell.sealed_value_fraction` of their value, the sealed part
 * rounded once. Worked out by hand; the stop-loss reads it.
 */
import { describe, expect, it } from 'vitest';
import { markedPnlCents, stopLossHit } from '../../src/strategy/budget.js';
import { sealedValueCents } from '../../src/strategy/pull-policy.js';
import { strategy } from '../strategy-builder.js';

describe('markedPnlCents', () => {
  // [label, cash change, held sell-back, listed sell-back, sealed worth (fractional cents), marked]
  const rows: [string, number, number, number, number, number][] = [
    ['nothing done', 0, 0, 0, 0, 0],
    ['spend alone is a loss', -1000, 0, 0, 0, -1000],
    ['a sell-back payout of 9 USD on 10 spent', -100, 0, 0, 0, -100],
    ['a held card at its sell-back value', -1000, 800, 0, 0, -200],
    ['a listed card counts as a held one (listing is not losing)', -1000, 0, 800, 0, -200],
    ['held and listed add up', -3000, 800, 1600, 0, -600],
    ['a sealed pack at its worth (10 USD at 0.5)', -1000, 0, 0, 500, -500],
    ['every part at once', -5000, 800, 1600, 500, -2100],
    ['a gain', 2000, 800, 0, 0, 2800],
    // 0.35 × 1001 = 350.35 a pack: 21 of them are 7357.35, rounded once to 7357 (each rounded
    // alone, 21 × 350 = 7350 would be seven cents less).
    ['sealed worth rounded once, not pack by pack', -21_000, 0, 0, 21 * 350.35, -13_643],
    ['a half cent of sealed worth rounds up (half away from zero)', -1000, 0, 0, 0.5, -999],
    ['under a half cent rounds down', -1000, 0, 0, 0.49, -1000],
  ];
  it.each(rows)('%s', (_label, cash, held, listed, sealed, marked) => {
    expect(markedPnlCents(cash, held, listed, sealed)).toBe(marked);
  });
});

describe('the stop-loss on the marked P&L counts sealed packs at the strategy fraction', () => {
  // Packs of 10 USD each yielding a sealed pack worth 10.01 USD, marked at 0.35: −649.65 a pack.
  const s = strategy({ budget: { stop_loss_usd: 129.95 }, sell: { sealed_value_fraction: 0.35 } });
  const afterPacks = (n: number) => {
    let sealed = 0;
    for (let k = 0; k < n; k++) sealed += sealedValueCents(1001, s);
    return markedPnlCents(-1000 * n, 0, 0, sealed);
  };
  const rows: [number, number, boolean][] = [
    [13, -8445, false], // 4554.55 of sealed worth; left out, the spend alone stops here: −13 000
    [20, -12_993, false], // 7007 of sealed worth; 7000 if each pack were rounded alone: −13 000
    [21, -13_643, true],
  ];
  it.each(rows)('after %i packs: %i cents, stop-loss %s', (n, marked, hit) => {
    expect(afterPacks(n)).toBe(marked);
    expect(stopLossHit({ markedPnlCents: afterPacks(n) }, s)).toBe(hit);
  });
});
