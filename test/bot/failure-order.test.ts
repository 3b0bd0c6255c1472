import { describe, expect, it } from 'vitest';
import { ServerError, UnauthorizedError } from '../../src/api/errors.js';
import { FailureOrder } from '../../src/bot/common/failure-order.js';

type Step = ['failed' | 'cleared', string];

describe('FailureOrder', () => {
  const items = ['a', 'b', 'c', 'd'];
  const cases: { name: string; steps: Step[]; order: string[] }[] = [
    { name: 'no failure keeps the order', steps: [], order: ['a', 'b', 'c', 'd'] },
    { name: 'a failed card goes last', steps: [['failed', 'a']], order: ['b', 'c', 'd', 'a'] },
    {
      name: 'failed cards in the order of their failures',
      steps: [
        ['failed', 'c'],
        ['failed', 'a'],
      ],
      order: ['b', 'd', 'c', 'a'],
    },
    {
      name: 'a card that fails again goes behind the others',
      steps: [
        ['failed', 'c'],
        ['failed', 'a'],
        ['failed', 'c'],
      ],
      order: ['b', 'd', 'a', 'c'],
    },
    {
      name: 'a cleared card is back in its own place',
      steps: [
        ['failed', 'a'],
        ['failed', 'b'],
        ['cleared', 'a'],
      ],
      order: ['a', 'c', 'd', 'b'],
    },
    { name: 'a failure of a card not in the pass changes nothing', steps: [['failed', 'z']], order: items },
  ];
  for (const c of cases)
    it(c.name, () => {
      const f = new FailureOrder();
      for (const [op, id] of c.steps) f[op](id);
      expect(f.sort([...items], (x) => x)).toEqual(c.order);
    });

  it('knows which cards failed', () => {
    const f = new FailureOrder();
    f.failed('a');
    f.failed('b');
    f.cleared('a');
    expect([f.has('a'), f.has('b'), f.has('c')]).toEqual([false, true, false]);
  });

  it('attempts a request: clears on success, moves the card back on an API error, throws the rest', async () => {
    const f = new FailureOrder();
    const down = new ServerError('down', 500);
    expect(await f.attempt('a', () => Promise.reject(down))).toBe(down);
    expect(f.sort(['a', 'b'], (x) => x)).toEqual(['b', 'a']);
    expect(await f.attempt('a', () => Promise.resolve())).toBeUndefined();
    expect(f.has('a')).toBe(false);
    const fatal = new UnauthorizedError('bad key');
    await expect(f.attempt('b', () => Promise.reject(fatal))).rejects.toBe(fatal);
    await expect(f.attempt('b', () => Promise.reject(new Error('bug')))).rejects.toThrow('bug');
    expect(f.has('b')).toBe(false);
  });
});
