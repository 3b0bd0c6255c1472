import { describe, expect, it } from 'vitest';
import { applyRate, formatUsd, groupThousands, roundHalfAway, toCents, toUsd } from '../../src/core/money.js';

describe('money', () => {
  it.each([
    [1.005, 101],
    [-1.005, -101],
    [0.125, 13],
    [-0.125, -13],
    [19.99, 1999],
    [0.1 + 0.2, 30],
    [123456.785, 12345679],
    [0, 0],
  ])('toCents(%s) = %s', (usd, cents) => {
    expect(toCents(usd)).toBe(cents);
  });

  it('rejects non-finite amounts', () => {
    expect(() => toCents(Number.NaN)).toThrow(RangeError);
  });

  it.each([
    [1000, 0.9, 900],
    [1999, 0.9, 1799], // 1799.1
    [1995, 0.9, 1796], // 1795.5 rounds away from zero
    [-1995, 0.9, -1796],
  ])('applyRate(%s, %s) = %s', (c, r, out) => {
    expect(applyRate(c, r)).toBe(out);
  });

  it('round trips and formats', () => {
    expect(toUsd(toCents(12.34))).toBe(12.34);
    expect(roundHalfAway(2.5)).toBe(3);
    expect(roundHalfAway(-2.5)).toBe(-3);
    expect(formatUsd(123456)).toBe('$1,234.56');
    expect(formatUsd(-5)).toBe('-$0.05');
    expect(formatUsd(-123456789)).toBe('-$1,234,567.89');
  });

  it.each([0, 7, 999, 1000, 12345, 999999, 1000000, -1, -1000, -9876543, 2 ** 53 - 1])(
    'groupThousands(%i) prints as toLocaleString("en-US")',
    (n) => {
      expect(groupThousands(n)).toBe(n.toLocaleString('en-US'));
    },
  );
});

describe('roundHalfAway fast path', () => {
  const reference = (x: number) => {
    const r = Math.round(Number(Math.abs(x).toPrecision(15)));
    return x < 0 ? -r : r;
  };
  it('agrees with the exact reference on values near and far from halves', () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let i = 0; i < 10_000; i++) {
      const cents = Math.floor(rnd() * 1e7) - 5e6;
      for (const x of [
        cents + 0.5,
        cents + rnd(),
        (cents / 100) * 100,
        cents * 0.9,
        cents * 1.5,
        (cents + 0.005) * 100,
        // Markups off a half by an ulp or two, either way (1.1 × 885 = 973.5000000000001).
        cents * 1.1,
        cents * 1.3,
        (cents + 0.5) * (1 + 2 ** -52),
        (cents + 0.5) * (1 - 2 ** -52),
        (cents + 0.5) * (1 + 2 ** -50),
        (cents + 0.5) * (1 - 2 ** -50),
        rnd(),
        0.5 + (rnd() - 0.5) * 1e-15,
      ]) {
        expect(roundHalfAway(x)).toBe(reference(x));
      }
    }
  });
});
