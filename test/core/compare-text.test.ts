import { describe, expect, it, vi } from 'vitest';
import { compareText } from '../../src/core/compare-text.js';
import { Rng } from '../../src/core/prng.js';

const en = new Intl.Collator('en');
const sign = (x: number) => Math.sign(x);

/** Random strings over `alphabet`, 0 to 7 characters, from a seeded stream. */
function strings(alphabet: string, n: number, seed: number): string[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => {
    let s = '';
    const len = Math.floor(rng.next() * 8);
    for (let i = 0; i < len; i++) s += alphabet[Math.floor(rng.next() * alphabet.length)];
    return s;
  });
}

describe('compareText', () => {
  it.each([
    ['ids: lower case, digits, _ - . /', '_-./09az', 1],
    ['with capitals: case after letters over the whole string', 'aAbB_-0', 2],
    ['outside the table: the en collator decides', 'aAé ~_Z0', 3],
  ])('orders %s as the en collation does', (_name, alphabet, seed) => {
    const xs = strings(alphabet, 400, seed);
    for (let i = 0; i + 1 < xs.length; i++) {
      for (const y of [xs[i + 1]!, xs[(i * 7) % xs.length]!]) {
        expect(sign(compareText(xs[i]!, y)), `${JSON.stringify(xs[i])} vs ${JSON.stringify(y)}`).toBe(
          sign(en.compare(xs[i]!, y)),
        );
      }
    }
  });

  it.each([
    ['pokemon/booster/chill', 'pokemon/booster/standard', -1],
    ['card_9', 'card_10', 1],
    ['card_a', 'card-a', -1],
    ['Abc', 'abc', 1],
    ['Ab', 'abc', -1],
    ['aB', 'Ab', -1],
    ['same', 'same', 0],
  ])('%s vs %s: %i', (a, b, want) => {
    expect(sign(compareText(a, b))).toBe(want);
    expect(sign(compareText(b, a))).toBe(want === 0 ? 0 : -want);
  });

  it('builds no collator for strings the table orders (ICU stays unloaded)', async () => {
    const Real = Intl.Collator;
    let made = 0;
    // A counting collator class: a spy on the constructor would not construct.
    Intl.Collator = class extends Real {
      constructor(...args: ConstructorParameters<typeof Real>) {
        super(...args);
        made++;
      }
    } as typeof Real;
    try {
      vi.resetModules();
      const fresh = await import('../../src/core/compare-text.js');
      expect(fresh.compareText('pack_b/chill', 'Pack-a/standard')).toBeLessThan(0);
      expect(made).toBe(0);
      expect(fresh.compareText('é', 'f')).toBeLessThan(0);
      expect(fresh.compareText('ü', 'f')).toBeGreaterThan(0);
      expect(made).toBe(1);
    } finally {
      Intl.Collator = Real;
    }
  });
});
