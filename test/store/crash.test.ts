/**
 * Crash safety with a real process killed by SIGKILL (no clean shutdown, no `close()`): the ledger is
 * bundled to plain JS, run in a child process, and killed at a chosen or random instant.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/store/ledger.js';

let dir: string;
let child: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'packbot-crash-'));
  // rolldown comes with vitest's toolchain; it turns the TS ledger into one ESM file the child can run.
  const { build } = await import('rolldown');
  const sqlite = pathToFileURL(createRequire(import.meta.url).resolve('better-sqlite3')).href;
  await build({
    input: resolve('src/store/ledger.ts'),
    platform: 'node',
    external: ['better-sqlite3'],
    output: { file: join(dir, 'ledger.mjs'), format: 'esm', paths: { 'better-sqlite3': sqlite } },
    write: true,
    logLevel: 'silent',
  });
  child = join(dir, 'child.mjs');
  writeFileSync(
    child,
    `
import { Ledger } from './ledger.mjs';
const [db, mode] = process.argv.slice(2);
// 'churn-deferred': the runner's ledger, its WAL checkpointed after every 4 commits.
const deferred = mode === 'churn-deferred';
const ledger = Ledger.open(db, deferred ? { deferCheckpoints: { every: 4, schedule: (run) => setImmediate(run) } } : {});
let ready = false;
const body = (i) => ({ pack_type: 'crash-pack', category: 'sports', quantity: 10, risk_level: 'chill', n: i });
const pull = (i, j) => ({
  pull_id: 'p-' + i + '-' + j, kind: 'card', item: { id: 'c-' + i + '-' + j, name: 'n', market_value: 1 }, value: 1.25,
  hit: { rarity_tier: 't', bucket: 'b', bucket_odds: 0.5, is_chase: false, chase_label: null },
  buyback: { amount: 1.13, rate: 0.9, valid_until: '2026-01-01T00:05:00Z', after: { amount: 1, rate: 0.8, valid_until: '2026-01-08T00:00:00Z' } },
});
if (mode === 'intent') {
  ledger.recordIntent({ key: 'crash-intent-1', account: 'main', operation: 'pack', body: body(1) });
  ledger.markIntentSent('crash-intent-1');
  process.stdout.write('READY\\n');
  setInterval(() => {}, 1000);
} else {
  for (let i = 0; ; i++) {
    // The checkpoints run between turns of the event loop.
    if (deferred) await new Promise((r) => setImmediate(r));
    const key = 'churn-key-' + i;
    ledger.recordIntent({ key, account: 'main', operation: 'pack', body: body(i) });
    ledger.markIntentSent(key);
    const pulls = Array.from({ length: 10 }, (_, j) => pull(i, j));
    ledger.confirmIntent(key, { checkout_id: 'co-' + i, pack_type: 'crash-pack', quantity: 10, total_charged: 10,
      remaining_balance: 100, summary: { total_value: 0, buyback_now_total: 0, best_pull: null }, pulls });
    for (const p of pulls) ledger.recordDecision({ pullId: p.pull_id, action: 'sell_back', reason: 'r' });
    const results = pulls.map((p) => ({ card_id: p.item.id, pull_id: p.pull_id, status: 'sold', payout_amount: 1.13 }));
    ledger.recordSellBack(results);
    ledger.recordSellBack(results.map((r) => ({ ...r, status: 'already_sold' })));
    if (i === 5 && !deferred) process.stdout.write('READY\\n');
    if (deferred && i >= 5 && ledger.checkpoints.counts.runs >= 3 && !ready) {
      ready = true;
      process.stdout.write('READY\\n');
    }
  }
}
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runUntilReady(db: string, mode: string): Promise<ChildProcess> {
  return new Promise((resolveReady, reject) => {
    const p = spawn(process.execPath, [child, db, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => {
      err += String(d);
    });
    p.stdout.on('data', (d) => {
      if (String(d).includes('READY')) resolveReady(p);
    });
    p.on('exit', (code) => reject(new Error(`child exited early (${code}): ${err}`)));
  });
}

const killed = (p: ChildProcess) =>
  new Promise<void>((r) => {
    p.removeAllListeners('exit');
    p.on('exit', () => r());
    p.kill('SIGKILL');
  });

describe('ledger survives SIGKILL', () => {
  it('an intent sent just before the kill is there on restart, exact body, unresolved', async () => {
    const db = join(dir, 'intent.db');
    await killed(await runUntilReady(db, 'intent'));
    const ledger = Ledger.open(db);
    const unresolved = ledger.unresolvedIntents();
    expect(unresolved.map((i) => [i.key, i.state, i.attempts])).toEqual([['crash-intent-1', 'sent', 1]]);
    expect(unresolved[0]?.bodyJson).toBe(
      JSON.stringify({
        pack_type: 'crash-pack',
        category: 'sports',
        quantity: 10,
        risk_level: 'chill',
        n: 1,
      }),
    );
    ledger.close();
  });

  const cases = [
    ...[0, 7, 23, 61].map((delay) => ({ mode: 'churn', delay })),
    // Killed while the ledger checkpoints after its commits, at instants drawn at random.
    ...[0, 1, 2].map(() => ({ mode: 'churn-deferred', delay: Math.floor(Math.random() * 40) })),
  ];
  for (const { mode, delay } of cases) {
    it(`${mode} killed mid-stream (+${delay} ms): every order is whole or absent, every payout counted once`, async () => {
      const db = join(dir, `${mode}-${delay}-${Math.random().toString(36).slice(2)}.db`);
      const p = await runUntilReady(db, mode);
      await new Promise((r) => setTimeout(r, delay));
      await killed(p);
      const raw = new Database(db, { readonly: true });
      const intents = raw.prepare('SELECT key, state FROM intents').all() as { key: string; state: string }[];
      expect(intents.length).toBeGreaterThan(5);
      for (const { key, state } of intents) {
        const order = raw.prepare('SELECT checkout_id FROM orders WHERE intent_key = ?').get(key) as
          | { checkout_id: string }
          | undefined;
        if (state === 'confirmed') {
          expect(order, key).toBeDefined();
          const n = raw
            .prepare('SELECT COUNT(*) AS n FROM pulls WHERE checkout_id = ?')
            .get(order!.checkout_id);
          expect(n).toEqual({ n: 10 });
        } else {
          expect(['pending', 'sent']).toContain(state);
          expect(order, key).toBeUndefined();
        }
      }
      expect(
        raw
          .prepare(
            'SELECT COUNT(*) AS n FROM pulls WHERE checkout_id NOT IN (SELECT checkout_id FROM orders)',
          )
          .get(),
      ).toEqual({ n: 0 });
      const dup = raw
        .prepare(
          'SELECT pull_id, COUNT(*) AS n FROM sellbacks WHERE counted = 1 GROUP BY pull_id HAVING n > 1',
        )
        .all();
      expect(dup).toEqual([]);
      const sold = raw.prepare("SELECT COUNT(*) AS n FROM pulls WHERE status = 'sold'").get() as {
        n: number;
      };
      const paid = raw
        .prepare('SELECT COUNT(*) AS n, COALESCE(SUM(payout_cents), 0) AS c FROM sellbacks WHERE counted = 1')
        .get() as { n: number; c: number };
      expect(paid.n).toBe(sold.n);
      expect(paid.c).toBe(sold.n * 113);
      raw.close();
      // And the ledger opens cleanly afterwards, with at most one unresolved intent (the one in flight).
      const ledger = Ledger.open(db);
      expect(ledger.unresolvedIntents().length).toBeLessThanOrEqual(1);
      ledger.close();
    });
  }
});
