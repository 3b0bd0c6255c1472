/**
 * The cash books (src/store/books.ts): a sale's proceeds are what the balance gained, whatever fee
 * the marketplace keeps and whenever its credit arrives; what the books cannot attribute is an
 * adjustment; and the identity cash P&L = balance change − adjustments holds after every reading.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import { attribute } from '../../src/store/books.js';
import { Ledger } from '../../src/store/ledger.js';
import { MIGRATIONS } from '../../src/store/migrations.js';

const T0 = Date.UTC(2026, 0, 5, 8);

describe('attribute: which waiting sales a credit pays, and how much each', () => {
  const w = (...prices: number[]) => prices.map((p, i) => ({ listingId: `l${i}`, priceCents: p }));
  it.each([
    ['one sale at 10%', 900, w(1000), 0.05, [900]],
    [
      'two sales split by their prices, each rounded on its own',
      2700 - 270 + 1035 - 104,
      w(2700, 1035),
      0.05,
      [2430, 931],
    ],
    ['the oldest only, when the credit fits it and not both', 900, w(1000, 3000), 0.1, [900]],
    ['none: the credit is far less than the oldest sale could pay', 100, w(1000), 0.05, []],
    ["never more than a sale's price: the rest stays free", 1500, w(1000), 0.05, [1000]],
    ['nothing waiting', 500, w(), 0.05, []],
  ])('%s', (_, cents, waiting, fee, expected) => {
    expect(attribute(cents, waiting, fee).map((s) => s.cents)).toEqual(expected);
  });
});

/** A ledger file as a packbot whose schema ended at `version` wrote it (open: the caller closes it). */
function ledgerAt(path: string, version: number): Database.Database {
  const db = new Database(path);
  for (const [i, sql] of MIGRATIONS.slice(0, version).entries()) {
    db.exec(sql);
    db.pragma(`user_version = ${i + 1}`);
  }
  return db;
}

function books() {
  const clock = new VirtualClock(T0);
  const ledger = Ledger.open(':memory:', { clock });
  const sale = (id: string, priceCents: number) => {
    ledger.recordListing({ listingId: id, cardId: `card-${id}`, priceCents, account: 'main' });
    return () => ledger.recordListingFill(id, null);
  };
  const residual = () => ledger.balanceIdentity('main')!.residualCents;
  return { clock, ledger, sale, residual };
}

describe('the books against balance readings', () => {
  it('credits a sale with what the balance gained, and measures the fee', () => {
    const { clock, ledger, sale, residual } = books();
    ledger.observeBalance('main', 100_000, 'reconcile', 0.05);
    const sold = sale('a', 10_000);
    clock.advance(60_000);
    sold();
    const obs = ledger.observeBalance('main', 109_000, 'reconcile', 0.05);
    expect(obs).toMatchObject({ deltaCents: 9_000, attributedCents: 9_000, adjustmentCents: 0 });
    expect(ledger.getListing('a')).toMatchObject({ proceedsCents: 9_000, feeCents: 1_000 });
    expect(ledger.listingFeeRate('main')).toBeCloseTo(0.1);
    expect(residual()).toBe(0);
  });

  it('keeps a sale waiting while its credit is late, and credits it when the balance shows it', () => {
    const { clock, ledger, sale, residual } = books();
    ledger.observeBalance('main', 100_000, 'reconcile', 0.05);
    sale('a', 10_000)();
    clock.advance(60_000);
    expect(ledger.observeBalance('main', 100_000, 'reconcile', 0.05).deltaCents).toBe(0);
    expect(ledger.getListing('a')?.proceedsCents).toBeNull();
    expect(ledger.balanceIdentity('main')).toMatchObject({ salesAwaitingCredit: 1, residualCents: 0 });
    clock.advance(60_000);
    ledger.observeBalance('main', 109_500, 'sell-back', 0.05);
    expect(ledger.getListing('a')?.proceedsCents).toBe(9_500);
    expect(residual()).toBe(0);
  });

  it('holds a rise no sale explains as a free credit, which a sale found by the next vault read takes', () => {
    const { clock, ledger, sale, residual } = books();
    ledger.observeBalance('main', 100_000, 'reconcile', 0.05);
    const vaultRead = clock.now();
    const sold = sale('a', 10_000);
    clock.advance(60_000);
    // The sale's credit shows in a reading before a vault read has seen the card gone.
    const rise = ledger.observeBalance('main', 109_000, 'sell-back', 0.05);
    expect(rise).toMatchObject({ attributedCents: 0, adjustmentCents: 9_000 });
    expect(residual()).toBe(0);
    clock.advance(30_000);
    sold();
    expect(ledger.creditFoundSales('main', vaultRead, 0.05).map((l) => l.proceedsCents)).toEqual([9_000]);
    expect(ledger.adjustments('main').reduce((n, a) => n + a.amountCents, 0)).toBe(0);
    expect(residual()).toBe(0);
    // The next reading sees nothing new: the credit is not counted twice.
    clock.advance(60_000);
    expect(ledger.observeBalance('main', 109_000, 'reconcile', 0.05).deltaCents).toBe(0);
    expect(residual()).toBe(0);
  });

  it('books a deposit and a withdrawal as adjustments, and a sale found later does not take a credit read before its window', () => {
    const { clock, ledger, sale, residual } = books();
    ledger.observeBalance('main', 100_000, 'reconcile', 0.05);
    clock.advance(60_000);
    ledger.observeBalance('main', 150_000, 'reconcile', 0.05);
    clock.advance(60_000);
    const vaultRead = clock.now();
    ledger.observeBalance('main', 140_000, 'reconcile', 0.05);
    expect(ledger.adjustments('main').map((a) => a.amountCents)).toEqual([50_000, -10_000]);
    sale('a', 10_000)();
    // The deposit was read before the vault read that still showed the card listed.
    expect(ledger.creditFoundSales('main', vaultRead, 0.05)).toEqual([]);
    expect(ledger.balanceIdentity('main')).toMatchObject({ adjustmentsCents: 40_000, residualCents: 0 });
    expect(residual()).toBe(0);
  });
});

describe("an account's listing proceeds (a running total kept by the ledger)", () => {
  const db = (ledger: Ledger) => (ledger as unknown as { db: Database.Database }).db;
  /** What the running totals stand for: sums over the account's filled (and credited) listings. */
  const summed = (ledger: Ledger, account: string) => ({
    proceeds: db(ledger)
      .prepare(`SELECT COALESCE(SUM(proceeds_cents), 0) FROM listings WHERE account = ? AND state = 'filled'`)
      .pluck()
      .get(account) as number,
    fee: db(ledger)
      .prepare(`SELECT COUNT(*) AS sales, COALESCE(SUM(fee_cents), 0) AS feeCents,
        COALESCE(SUM(price_cents), 0) AS priceCents FROM listings WHERE account = ? AND state = 'filled'
        AND credited_at IS NOT NULL AND fee_cents IS NOT NULL`)
      .get(account),
  });
  const kept = (ledger: Ledger, account: string) => ({
    proceeds: ledger.listingProceedsCents(account),
    fee: ledger.listingFeeTotals(account),
  });

  it('equals the sum of its filled listings after every change (random listing lives)', () => {
    for (const seed of [1, 2, 3, 20261129]) {
      const rng = new Rng(seed);
      const clock = new VirtualClock(T0);
      const ledger = Ledger.open(':memory:', { clock });
      const accounts = ['main', 'other'];
      let balance = 100_000;
      const active: string[] = [];
      for (let step = 0; step < 120; step++) {
        clock.advanceSync(1 + rng.int(60_000));
        const r = rng.next();
        if (r < 0.4 || active.length === 0) {
          const id = `l${seed}-${step}`;
          ledger.recordListing({
            listingId: id,
            cardId: `card-${id}`,
            priceCents: 100 + rng.int(10_000),
            account: accounts[rng.int(2)]!,
          });
          active.push(id);
        } else {
          const id = active.splice(rng.int(active.length), 1)[0]!;
          if (r < 0.55) ledger.recordListingUpdate(id, { delisted: true });
          else if (r < 0.7) ledger.recordListingFill(id, 50 + rng.int(5_000));
          else ledger.recordListingFill(id, null);
        }
        // A reading that credits what it can of the sales waiting for their credit.
        if (rng.next() < 0.3) {
          balance += rng.int(8_000);
          ledger.observeBalance(accounts[rng.int(2)]!, balance, 'reconcile', 0.05);
        }
        for (const a of [...accounts, 'nobody']) expect(kept(ledger, a)).toEqual(summed(ledger, a));
      }
      // The lives reached every case: sales credited by readings, and proceeds both ways.
      const both = [summed(ledger, 'main'), summed(ledger, 'other')];
      expect(both.reduce((n, t) => n + (t.fee as { sales: number }).sales, 0)).toBeGreaterThan(0);
      expect(both.reduce((n, t) => n + t.proceeds, 0)).toBeGreaterThan(0);
      ledger.close();
    }
  });

  it('starts from the filled listings of a ledger written before it was kept', () => {
    const dir = mkdtempSync(join(tmpdir(), 'packbot-proceeds-'));
    try {
      const path = join(dir, 'old.db');
      const db = ledgerAt(path, 8);
      const add = db.prepare(`INSERT INTO listings (listing_id, card_id, account, price_cents, state,
        created_at, proceeds_cents, credited_at, fee_cents) VALUES (?, ?, ?, 1000, ?, 0, ?, ?, ?)`);
      add.run('a', 'ca', 'main', 'filled', 900, 5, 100);
      add.run('b', 'cb', 'main', 'filled', 450, null, null);
      add.run('c', 'cc', 'main', 'filled', null, null, null);
      add.run('d', 'cd', 'main', 'delisted', null, null, null);
      add.run('e', 'ce', 'other', 'filled', 70, null, null);
      db.close();
      const ledger = Ledger.open(path);
      expect([ledger.listingProceedsCents('main'), ledger.listingProceedsCents('other')]).toEqual([1350, 70]);
      expect(ledger.listingFeeTotals('main')).toEqual({ sales: 1, feeCents: 100, priceCents: 1000 });
      expect(ledger.listingFeeTotals()).toEqual({ sales: 1, feeCents: 100, priceCents: 1000 });
      ledger.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a ledger the bot has not migrated yet', () => {
  it('reads (doctor, report, status) from a migrated copy and leaves the file as it is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'packbot-books-'));
    try {
      const path = join(dir, 'old.db');
      ledgerAt(path, 4).close();
      const ledger = Ledger.open(path, { readonly: true });
      expect(ledger.schemaVersion()).toBe(4);
      expect(ledger.adjustments('main')).toEqual([]);
      ledger.close();
      const again = new Database(path, { readonly: true });
      expect(again.pragma('user_version', { simple: true })).toBe(4);
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
