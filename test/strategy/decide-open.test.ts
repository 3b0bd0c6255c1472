import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/core/clock.js';
import {
  budgetPrice,
  decideOpen,
  type OpenState,
  openStateFromAccount,
  opensAgain,
  opensPick,
  rowNumbersUnread,
  rowsNeverRead,
  waitCashCannotLift,
} from '../../src/strategy/decide-open.js';
import { type ScoreRow, scorePool } from '../../src/strategy/score.js';
import { chaseOnTop } from '../fixtures/pools.js';
import { strategy } from '../strategy-builder.js';
import { linearFill } from './helpers.js';

const NOW = Date.parse('2026-03-01T10:00:00Z');
const MIDNIGHT = Date.parse('2026-03-02T00:00:00Z');

// Budget: daily 500, total 5000, reserve 100, stop-loss 1000 (the defaults).
const s = strategy({ sell: { list: { fill: linearFill } }, open: { max_quantity: 5 } });
const good = scorePool(chaseOnTop, s); // price 10, open ×5
const dear: ScoreRow = {
  ...good,
  pack_type: 'dear',
  price: 400,
  score: 1,
  decision: { action: 'open', quantity: 5 },
};
const meh: ScoreRow = {
  ...good,
  pack_type: 'meh',
  decision: { action: 'wait', reason: 'realized ev ratio 0.9' },
};

const state = (over: Partial<OpenState> = {}): OpenState => ({
  balanceCents: 1_000_000,
  spentTodayCents: 0,
  spentTotalCents: 0,
  markedPnlCents: 0,
  killSwitch: false,
  packsLeftToday: 100,
  nextPurchaseAt: NOW - 1,
  resetsAt: MIDNIGHT,
  lastPurchaseAt: null,
  ...over,
});

describe('decideOpen', () => {
  it.each([
    [
      'opens the best row at its quantity',
      state(),
      NOW,
      { action: 'open', pack_type: 'chase-top', quantity: 5, priceCents: 1000 },
    ],
    [
      'kill switch (state)',
      state({ killSwitch: true }),
      NOW,
      { action: 'wait', reason: 'kill switch is on' },
    ],
    [
      'stop-loss reached',
      state({ markedPnlCents: -100_000 }),
      NOW,
      { action: 'wait', reason: expect.stringMatching(/stop-loss/) },
    ],
    ['stop-loss 1 cent short', state({ markedPnlCents: -99_999 }), NOW, { action: 'open' }],
    ['no packs left today', state({ packsLeftToday: 0 }), NOW, { action: 'wait', until: MIDNIGHT }],
    ['packs left caps the quantity', state({ packsLeftToday: 2 }), NOW, { action: 'open', quantity: 2 }],
    ['before next_purchase_at', state({ nextPurchaseAt: NOW + 1 }), NOW, { action: 'wait', until: NOW + 1 }],
    ['at next_purchase_at', state({ nextPurchaseAt: NOW }), NOW, { action: 'open' }],
    [
      'daily spend: 3 packs of headroom',
      state({ spentTodayCents: 47_000 }),
      NOW,
      { action: 'open', quantity: 3 },
    ],
    [
      'daily spend exhausted: wait until midnight',
      state({ spentTodayCents: 49_500 }),
      NOW,
      { action: 'wait', reason: expect.stringMatching(/daily spend/), until: MIDNIGHT },
    ],
    [
      'total spend exhausted',
      state({ spentTotalCents: 499_100 }),
      NOW,
      { action: 'wait', reason: expect.stringMatching(/total spend/) },
    ],
    [
      'balance reserve: 1 pack above 100 USD',
      state({ balanceCents: 11_000 }),
      NOW,
      { action: 'open', quantity: 1 },
    ],
    [
      'balance reserve reached',
      state({ balanceCents: 10_999 }),
      NOW,
      { action: 'wait', reason: expect.stringMatching(/reserve/) },
    ],
  ] as const)('%s', (_n, st, now, expected) => {
    expect(decideOpen(st, [meh, good], s, now)).toMatchObject(expected);
  });

  it('honours the strategy kill switch and cool-down on both sides', () => {
    const killed = strategy({ budget: { kill_switch: true } });
    expect(decideOpen(state(), [good], killed, NOW)).toMatchObject({
      action: 'wait',
      reason: 'kill switch is on',
    });
    const cool = strategy({ open: { cooldown_seconds: 300 } });
    const last = NOW - 300_000;
    expect(decideOpen(state({ lastPurchaseAt: last + 1 }), [good], cool, NOW)).toMatchObject({
      until: NOW + 1,
    });
    expect(decideOpen(state({ lastPurchaseAt: last }), [good], cool, NOW)).toMatchObject({ action: 'open' });
  });

  it('falls back to a cheaper open row when the best does not fit the budget', () => {
    const rows = [{ ...dear, score: 99 }, good];
    expect(decideOpen(state({ spentTodayCents: 20_000 }), rows, s, NOW)).toMatchObject({
      pack_type: 'chase-top',
    });
    expect(decideOpen(state(), rows, s, NOW)).toMatchObject({ pack_type: 'dear', quantity: 1 });
  });

  it('waits with the best reason when nothing is worth opening', () => {
    expect(decideOpen(state(), [meh], s, NOW)).toMatchObject({
      action: 'wait',
      reason: expect.stringMatching(/ratio 0.9/),
    });
    expect(decideOpen(state(), [], s, NOW)).toMatchObject({ action: 'wait' });
  });

  it('without resets_at assumes the next UTC midnight', () => {
    expect(decideOpen(state({ packsLeftToday: 0, resetsAt: null }), [good], s, NOW + DAY_MS)).toMatchObject({
      until: MIDNIGHT + DAY_MS,
    });
  });
});

describe('decideOpen with untrustworthy prices (defence in depth: rows as if the scorer were bypassed)', () => {
  // `good` is 10 USD a pack, open x5; the daily cap is 500 USD.
  const priced = (price: number, list_price: number | null): ScoreRow => ({
    ...good,
    pack_type: 'odd',
    price,
    list_price,
    score: 99, // ranked before `good`
    decision: { action: 'open', quantity: 10 },
  });
  it.each<[string, ScoreRow, OpenState, object]>([
    ['pool price 0: never opened, the honest row is', priced(0, null), state(), { pack_type: 'chase-top' }],
    [
      'pool price 0, list 150: budgeted at 150 (3 packs within 500 USD, not 10)',
      priced(0, 150),
      state(),
      { pack_type: 'odd', quantity: 3, priceCents: 15_000 },
    ],
    ['negative price: never opened', priced(-5, null), state(), { pack_type: 'chase-top' }],
    ['list price 0 and pool 0: never opened', priced(0, 0), state(), { pack_type: 'chase-top' }],
    [
      'pool 1.50 but list 150: sized and priced at 150',
      priced(1.5, 150),
      state({ spentTodayCents: 20_000 }),
      { pack_type: 'odd', quantity: 2, priceCents: 15_000 },
    ],
    [
      'list 1.50 but pool 150: sized and priced at 150',
      priced(150, 1.5),
      state({ spentTodayCents: 20_000 }),
      { pack_type: 'odd', quantity: 2, priceCents: 15_000 },
    ],
    [
      'pool 1.50 but list 150, no room for one at 150: the cheaper honest row',
      priced(1.5, 150),
      state({ spentTodayCents: 40_000 }),
      { pack_type: 'chase-top', quantity: 5 },
    ],
    [
      'equal prices: as before',
      priced(150, 150),
      state(),
      { pack_type: 'odd', quantity: 3, priceCents: 15_000 },
    ],
  ])('%s', (_name, row, st, expected) => {
    expect(decideOpen(st, [row, good], s, NOW)).toMatchObject({ action: 'open', ...expected });
  });

  it('waits rather than open a free pack when it is the only open row', () => {
    const d = decideOpen(state(), [priced(0, null)], s, NOW);
    expect(d.action).toBe('wait');
  });
});

describe('openStateFromAccount', () => {
  it('takes limits and balance from the account body, totals from the caller', () => {
    const st = openStateFromAccount(
      {
        username: 'u',
        balance: 1234.56,
        limits: {
          packs_today: 3,
          max_packs_per_day: 100,
          packs_left_today: 97,
          resets_at: '2026-03-02T00:00:00Z',
          min_seconds_between_purchases: 60,
          next_purchase_at: '2026-03-01T10:01:00Z',
        },
      },
      {
        spentTodayCents: 3000,
        spentTotalCents: 9000,
        markedPnlCents: -500,
        killSwitch: false,
        lastPurchaseAt: null,
      },
    );
    expect(st).toMatchObject({
      balanceCents: 123456,
      packsLeftToday: 97,
      nextPurchaseAt: NOW + 60_000,
      resetsAt: MIDNIGHT,
    });
    expect(decideOpen(st, [good], s, NOW)).toMatchObject({ action: 'wait', until: NOW + 60_000 });
    expect(decideOpen(st, [good], s, NOW + 60_000)).toMatchObject({ action: 'open', quantity: 5 });
  });
});

describe('rowsNeverRead', () => {
  // Budget: daily 500, total 5000 USD; the cheapest pool here costs 10 USD (good, meh).
  const cheapest = 1000;
  it.each([
    ['fresh budget', state(), false],
    ['total headroom one price', state({ spentTotalCents: 499_000 }), false],
    ['total headroom below the cheapest price', state({ spentTotalCents: 499_001 }), true],
    ['total spent, nothing today', state({ spentTotalCents: 500_000 }), true],
    // The daily cap would give `until` the next midnight when an open row is there: rows are read.
    [
      'total headroom below a price, daily headroom no larger',
      state({ spentTotalCents: 499_500, spentTodayCents: 49_500 }),
      false,
    ],
    [
      'total headroom below a price, daily headroom larger',
      state({ spentTotalCents: 499_500, spentTodayCents: 49_499 }),
      true,
    ],
    ['in-doubt orders', state({ spentTotalCents: 500_000, inDoubtCents: 100 }), false],
    ['operator kill switch (can be turned off)', state({ killSwitch: true }), false],
  ])('%s', (_name, st, never) => {
    expect(rowsNeverRead(st, s, cheapest)).toBe(never);
  });

  it("the strategy's kill switch: never read", () => {
    expect(rowsNeverRead(state(), strategy({ budget: { kill_switch: true } }), cheapest)).toBe(true);
  });

  it('once true, stays true, and decideOpen answers the same with or without rows', () => {
    // Random walks of the budget state: spend (packs or cards), new UTC days, balance moves.
    let seed = 5;
    const rand = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const rowSets: ScoreRow[][] = [[], [good], [meh], [good, dear, meh], [dear]];
    let checked = 0;
    for (let walk = 0; walk < 300; walk++) {
      let st = state({
        spentTotalCents: 480_000 + Math.floor(rand() * 21_000),
        spentTodayCents: Math.floor(rand() * 50_000),
        balanceCents: 5_000 + Math.floor(rand() * 200_000),
        packsLeftToday: rand() < 0.1 ? 0 : 100,
      });
      let seen = false;
      let now = NOW;
      for (let step = 0; step < 30; step++) {
        const never = rowsNeverRead(st, s, cheapest);
        if (seen) expect(never).toBe(true);
        if (never) {
          seen = true;
          checked++;
          const without = decideOpen(st, [], s, now);
          for (const rows of rowSets) {
            const d = decideOpen(st, rows, s, now);
            expect(d.action).toBe('wait');
            expect(d.action === 'wait' && d.until).toBe(without.action === 'wait' && without.until);
          }
        }
        const u = rand();
        if (u < 0.4) {
          // A purchase that fits what decideOpen allows (a card counts as spend alike).
          const cost = Math.floor(rand() * 2_000);
          const room = Math.min(50_000 - st.spentTodayCents, 500_000 - st.spentTotalCents);
          if (cost <= room)
            st = {
              ...st,
              spentTodayCents: st.spentTodayCents + cost,
              spentTotalCents: st.spentTotalCents + cost,
            };
        } else if (u < 0.6) {
          st = { ...st, spentTodayCents: 0, packsLeftToday: 100 };
          now += DAY_MS;
        } else
          st = { ...st, balanceCents: Math.max(0, st.balanceCents + Math.floor((rand() - 0.5) * 40_000)) };
      }
    }
    expect(checked).toBeGreaterThan(500);
  });
});

describe('rowNumbersUnread', () => {
  // The cheapest pool here costs 10 USD (good, meh); dear costs 400.
  const cheapest = 1000;
  const cool = strategy({
    sell: { list: { fill: linearFill } },
    open: { max_quantity: 5, cooldown_seconds: 120 },
  });
  it.each([
    ['fresh budget', state(), s, false],
    ['stop-loss hit', state({ markedPnlCents: -100_000 }), s, true],
    ['operator kill switch', state({ killSwitch: true }), s, true],
    ["the day's packs used up", state({ packsLeftToday: 0 }), s, true],
    ['rate limit', state({ nextPurchaseAt: NOW + 1 }), s, true],
    ['cool-down', state({ lastPurchaseAt: NOW - 60_000 }), cool, true],
    ['cool-down over', state({ lastPurchaseAt: NOW - 120_000 }), cool, false],
    ['daily headroom one cheapest price', state({ spentTodayCents: 49_000 }), s, false],
    ['daily headroom below the cheapest price', state({ spentTodayCents: 49_001 }), s, true],
    ['balance just above the reserve', state({ balanceCents: 10_999 }), s, true],
  ])('%s', (_name, st, strat, unread) => {
    expect(rowNumbersUnread(st, strat, cheapest, NOW)).toBe(unread);
  });

  it('when true, decideOpen waits, until the same time for any rows alike in having an open row', () => {
    let seed = 11;
    const rand = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    // Grouped by whether some row is open: the only thing of the rows the answer may read.
    const groups: ScoreRow[][][] = [
      [[], [meh]],
      [[good], [dear], [good, dear, meh], [meh, dear]],
    ];
    let checked = 0;
    let opened = 0;
    for (let k = 0; k < 3000; k++) {
      const strat = rand() < 0.3 ? cool : s;
      const st = state({
        spentTotalCents: Math.floor(rand() * 500_000),
        spentTodayCents: 45_000 + Math.floor(rand() * 5_000),
        balanceCents: 8_000 + Math.floor(rand() * 20_000),
        markedPnlCents: -Math.floor(rand() * 110_000),
        packsLeftToday: rand() < 0.1 ? 0 : 100,
        nextPurchaseAt: NOW - 1 + (rand() < 0.1 ? 30_000 : 0),
        lastPurchaseAt: rand() < 0.5 ? NOW - Math.floor(rand() * 240_000) : null,
      });
      if (!rowNumbersUnread(st, strat, cheapest, NOW)) {
        if (decideOpen(st, [good], strat, NOW).action === 'open') opened++;
        continue;
      }
      checked++;
      for (const group of groups) {
        const first = decideOpen(st, group[0]!, strat, NOW);
        expect(first.action).toBe('wait');
        // The same wait and `until` (a wait's reason may name the best wait row: no path reads it).
        const until = first.action === 'wait' ? first.until : 'open';
        for (const rows of group) {
          const d = decideOpen(st, rows, strat, NOW);
          expect(d.action === 'wait' ? d.until : 'open').toBe(until);
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
    expect(opened).toBeGreaterThan(100);
  });
});

describe('opensAgain', () => {
  it('when true, decideOpen gives the last open decision again, on random states', () => {
    let seed = 5;
    const rand = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const cool = strategy({
      sell: { list: { fill: linearFill } },
      open: { max_quantity: 5, cooldown_seconds: 120 },
    });
    let again = 0;
    let not = 0;
    for (const [rows, best] of [
      [[good, meh], good],
      [[dear, meh], dear],
    ] as const) {
      const pick = { best, priceCents: budgetPrice(best), maxPriceCents: budgetPrice(best) };
      for (const strat of [s, cool]) {
        const last = decideOpen(state(), rows, strat, NOW);
        expect(opensPick(last, pick)).toBe(true);
        expect(opensPick(last, { ...pick, priceCents: pick.priceCents + 1 })).toBe(false);
        expect(opensPick({ action: 'wait', reason: 'x' }, pick)).toBe(false);
        for (let k = 0; k < 1500; k++) {
          const st = state({
            spentTotalCents: Math.floor(rand() * 500_000),
            spentTodayCents: Math.floor(rand() * 50_000),
            balanceCents: 8_000 + Math.floor(rand() * 200_000),
            markedPnlCents: -Math.floor(rand() * 110_000),
            packsLeftToday: Math.floor(rand() * 8),
            nextPurchaseAt: NOW - 1 + (rand() < 0.1 ? 30_000 : 0),
            lastPurchaseAt: rand() < 0.5 ? NOW - Math.floor(rand() * 240_000) : null,
          });
          if (opensAgain(st, strat, pick, last, NOW)) {
            again++;
            expect(decideOpen(st, rows, strat, NOW)).toEqual(last);
          } else not++;
        }
      }
    }
    expect(again).toBeGreaterThan(300);
    expect(not).toBeGreaterThan(300);
  });
});

describe('waitCashCannotLift', () => {
  const cool = strategy({
    sell: { list: { fill: linearFill } },
    open: { max_quantity: 5, cooldown_seconds: 600 },
  });
  it.each<[string, OpenState, number]>([
    ["the day's packs used up: the reset", state({ packsLeftToday: 0 }), MIDNIGHT],
    ['the rate limit holds: its end', state({ nextPurchaseAt: NOW + 5000 }), NOW + 5000],
    [
      'neither (a cool-down, a budget guard or the cash may decide): none',
      state({ lastPurchaseAt: NOW - 1000 }),
      Number.NaN,
    ],
    ['a poor balance changes nothing here', state({ packsLeftToday: 0, balanceCents: 0 }), MIDNIGHT],
  ])('%s', (_name, st, want) => {
    expect(waitCashCannotLift(st, NOW)).toBe(want);
    if (Number.isNaN(want)) return;
    // decideOpen waits for the same instant, whatever the cash (no budget guard blocks here).
    for (const balanceCents of [1_000_000, 5_000_000])
      expect(decideOpen({ ...st, balanceCents }, [good, dear, meh], cool, NOW)).toMatchObject({
        action: 'wait',
        until: want,
      });
  });
});
