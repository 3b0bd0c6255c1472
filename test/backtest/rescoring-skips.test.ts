/**
 * The dynamic market skips work whose result cannot change a decision: a due wait row proven to
 * stay a wait keeps its row (`provenWait`), and once no pack can be opened again
 * (`rowsNeverRead`) no row is built and the world's pools stand still. Property: on the sim
 * snapshot, over many paths and strategies, the skipping market and one that rebuilds every due
 * row and reads rows at every decision give the same path results, and the same open rows and
 * actions at every decision where both read rows (the skipping one's are a prefix: it stops).
 * A decision that can open nothing whatever the rows (`rowNumbersUnread`) reads the rows as last
 * made (`rowsAsLast`): the rows the next decision reads are then fresher, and the world's cards
 * are drawn when read, so its paths are the same in law, not path by path (checked below).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { SnapshotFile } from '../../src/api/snapshot-schema.js';
import { runPath } from '../../src/backtest/path/path.js';
import type { DrawParts, Listing, PathMarket } from '../../src/backtest/path/path-market.js';
import { Engine } from '../../src/backtest/run/engine.js';
import { DynamicMarket } from '../../src/backtest/world/dynamic-market.js';
import type { Rng } from '../../src/core/prng.js';
import type { ScoreRow } from '../../src/strategy/score.js';
import { type StrategyOverride, strategy } from '../strategy-builder.js';

const ROOT = join(import.meta.dirname, '..', '..');
const snapshot = JSON.parse(
  readFileSync(join(ROOT, 'test', 'fixtures', 'sim-pokemon-snapshot.json'), 'utf8'),
) as SnapshotFile;

function shipped(name: string, over: StrategyOverride = {}) {
  return strategy(over, { base: parseYaml(readFileSync(join(ROOT, 'strategies', `${name}.yaml`), 'utf8')) });
}

/** What a decision reads of the rows: every action, and an open row's numbers. */
function readOf(rows: readonly ScoreRow[]): string {
  return rows
    .map((r) => {
      const at = `${r.category}/${r.pack_type}/${r.risk_level}`;
      const d = r.decision;
      if (d.action !== 'open') return `${at} wait`;
      const numbers = [r.price, r.list_price, r.realized_ev, r.realized_ev_ratio, r.realized_stdev, r.score];
      return `${at} open ${d.quantity} ${numbers.join(' ')}`;
    })
    .join('\n');
}

/**
 * The dynamic market behind the `PathMarket` interface without its optional `rowsAsLast`: every
 * decision that reads rows gets them as due (subclasses record or override a method).
 */
class Delegating implements PathMarket {
  constructor(readonly inner: DynamicMarket) {}
  get shop() {
    return this.inner.shop;
  }
  advance(now: number): void {
    this.inner.advance(now);
  }
  rows(balanceCents: number, now: number): readonly ScoreRow[] {
    return this.inner.rows(balanceCents, now);
  }
  rowsUnread(now: number): void {
    this.inner.rowsUnread(now);
  }
  nextRefreshAt(now: number): number {
    return this.inner.nextRefreshAt(now);
  }
  open(pool: number, qty: number, now: number, rng: Rng, out: Int32Array): number {
    return this.inner.open(pool, qty, now, rng, out);
  }
  drawParts(pool: number, now: number, out: DrawParts): void {
    this.inner.drawParts(pool, now, out);
  }
  list(l: Listing, now: number, rng: Rng): void {
    this.inner.list(l, now, rng);
  }
  holdValue(l: Listing, now: number): number {
    return this.inner.holdValue(l, now);
  }
}

/** The dynamic market, recording what every `rows` gives. */
class Recording extends Delegating {
  readonly reads: string[] = [];
  override rows(balanceCents: number, now: number): readonly ScoreRow[] {
    const rows = this.inner.rows(balanceCents, now);
    this.reads.push(`${now} ${balanceCents}\n${readOf(rows)}`);
    return rows;
  }
}

const CASES: [string, ReturnType<typeof shipped>][] = [
  ['balanced', shipped('balanced')],
  ['chase', shipped('chase')],
  ['conservative', shipped('conservative')],
  // Full Kelly below break-even: waits by Kelly size, by no edge and by the threshold; early cap.
  [
    'kelly, small budget',
    shipped('balanced', {
      open: { min_ev_ratio: 0.9, kelly_fraction: 1 },
      budget: { max_total_spend_usd: 900, max_daily_spend_usd: 300 },
    }),
  ],
  ['kill switch', shipped('balanced', { budget: { kill_switch: true } })],
];
const SEED = 7;
const PATHS = 10;
const DAYS = 30;

describe('rescoring skips only what cannot change a decision (sim snapshot)', () => {
  it.each(CASES)('%s: same paths and same rows read as rebuilding every row', (name, strategy) => {
    const engine = new Engine({ snapshot, strategy, days: DAYS, seed: SEED, market: 'dynamic' });
    let builtSkipping = 0;
    let builtEvery = 0;
    let unread = 0;
    for (let i = 0; i < PATHS; i++) {
      const opts = { days: DAYS, seed: SEED, cards: engine.cards };
      const skipping = new Recording(new DynamicMarket(engine.model, SEED, i, undefined, engine.cards));
      const every = new Recording(new DynamicMarket(engine.model, SEED, i, undefined, engine.cards));
      every.inner.rescorer.proveWaits = false;
      const a = runPath(engine.model, skipping, i, opts);
      const b = runPath(engine.model, every, i, { ...opts, readEveryRow: true });
      expect(a).toEqual(b);
      expect(skipping.reads.length).toBeLessThanOrEqual(every.reads.length);
      expect(skipping.reads).toEqual(every.reads.slice(0, skipping.reads.length));
      builtSkipping += skipping.inner.rescorer.rowsBuilt;
      builtEvery += every.inner.rescorer.rowsBuilt;
      unread += every.reads.length - skipping.reads.length;
    }
    // Not vacuous: these skip rows (the budget runs out, proven waits, or both); `conservative`
    // spends too little to run out, and its waits are mostly below the threshold already.
    if (name !== 'conservative') {
      expect(builtSkipping).toBeLessThan(builtEvery);
      expect(unread).toBeGreaterThan(0);
    }
    if (name === 'kill switch') expect(builtSkipping).toBe(0);
  });
});

/** The dynamic market without `rowsAsLast`: every decision rescores as due. */
class Rescoring extends Delegating {}

describe('rows as last made while nothing can be opened (sim snapshot)', () => {
  // `chase` spends most of a path under its stop-loss, `balanced` days under its daily cap.
  it.each([
    ['balanced', shipped('balanced')],
    ['chase', shipped('chase')],
  ])(
    '%s: fewer rows, the same paths in law (paired differences within 4 standard errors)',
    (_n, strategy) => {
      const n = 80;
      const engine = new Engine({ snapshot, strategy, days: DAYS, seed: SEED, market: 'dynamic' });
      let builtLast = 0;
      let builtDue = 0;
      const diffs: Record<'packs' | 'net' | 'spend', number[]> = { packs: [], net: [], spend: [] };
      for (let i = 0; i < n; i++) {
        const opts = { days: DAYS, seed: SEED, cards: engine.cards };
        const last = new DynamicMarket(engine.model, SEED, i, undefined, engine.cards);
        const due = new DynamicMarket(engine.model, SEED, i, undefined, engine.cards);
        const a = runPath(engine.model, last, i, opts);
        const b = runPath(engine.model, new Rescoring(due), i, opts);
        builtLast += last.rescorer.rowsBuilt;
        builtDue += due.rescorer.rowsBuilt;
        diffs.packs.push(a.packs - b.packs);
        diffs.net.push(a.netPnlCents - b.netPnlCents);
        diffs.spend.push(a.spendCents - b.spendCents);
      }
      expect(builtLast).toBeLessThan(0.7 * builtDue);
      for (const d of Object.values(diffs)) {
        const mean = d.reduce((x, y) => x + y, 0) / n;
        const sd = Math.sqrt(d.reduce((x, y) => x + (y - mean) ** 2, 0) / (n - 1));
        expect(Math.abs(mean)).toBeLessThanOrEqual((4 * sd) / Math.sqrt(n) + 1e-9);
      }
    },
  );
});
