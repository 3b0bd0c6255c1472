/**
 * `packbot run` on the embedded simulator resumes after a restart (issue #5): the simulator's state
 * is kept next to the ledger, so the second run meets the same market the ledger remembers — no
 * order closed as SIM_RESTARTED, no holding written off — and goes on trading. Both after SIGTERM
 * (state written on shutdown) and after SIGKILL (state written after every mutating request).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir, writeConfig } from './helpers.js';
import { type BotProcess, built, startBot, stopBots } from './process.js';

afterEach(async () => {
  await stopBots();
  removeTempDirs();
});

interface Snapshot {
  orders: { checkout_id: string; created_at: number }[];
  pulls: { pull_id: string; checkout_id: string; status: string }[];
  simRestarted: number;
  unresolved: number;
  latest: number;
}

function snapshot(dir: string): Snapshot {
  const db = new Database(join(dir, 'ledger.db'), { readonly: true, fileMustExist: true });
  try {
    return {
      orders: db
        .prepare('SELECT checkout_id, created_at FROM orders ORDER BY created_at')
        .all() as Snapshot['orders'],
      pulls: db
        .prepare('SELECT pull_id, checkout_id, status FROM pulls ORDER BY pull_id')
        .all() as Snapshot['pulls'],
      simRestarted: (
        db.prepare(`SELECT count(*) AS n FROM intents WHERE error_code = 'SIM_RESTARTED'`).get() as {
          n: number;
        }
      ).n,
      unresolved: (
        db
          .prepare(`SELECT count(*) AS n FROM intents WHERE state IN ('pending', 'sent', 'in_doubt')`)
          .get() as {
          n: number;
        }
      ).n,
      latest: (db.prepare('SELECT max(created_at) AS t FROM orders').get() as { t: number }).t,
    };
  } finally {
    db.close();
  }
}

async function stop(bot: BotProcess): Promise<void> {
  bot.child.kill('SIGTERM');
  expect((await bot.exit).code).toBe(0);
}

/** Every order of `before` is still in `after`, and none of its pulls was written off. */
function expectKept(before: Snapshot, after: Snapshot): void {
  const orders = new Set(after.orders.map((o) => o.checkout_id));
  for (const o of before.orders) expect(orders.has(o.checkout_id), o.checkout_id).toBe(true);
  const pulls = new Map(after.pulls.map((p) => [p.pull_id, p.status]));
  for (const p of before.pulls) {
    expect(pulls.has(p.pull_id), p.pull_id).toBe(true);
    expect(pulls.get(p.pull_id), p.pull_id).not.toBe('gone');
  }
  expect(after.simRestarted).toBe(0);
}

const notRestored = (bot: BotProcess) =>
  bot.lines.filter((l) => l.includes('embedded simulator state not restored') || l.includes('SIM_RESTARTED'));

describe.skipIf(!built())('packbot run: the embedded simulator survives a restart', () => {
  it('resumes from the ledger after SIGTERM and after SIGKILL', async () => {
    const dir = tempDir();
    // Sped up 60x so the 60 s between purchases pass in a second of the test.
    const config = writeConfig(dir, {
      baseUrl: 'embedded',
      keyEnv: 'PB_UNSET_KEY',
      extra: 'sim:\n  speed: 60\n',
    });

    const first = startBot(['run', '--config', config]);
    await first.waitFor('order confirmed');
    await first.waitFor('sold back');
    await stop(first);
    expect(existsSync(join(dir, 'ledger.sim-state'))).toBe(true);
    const s1 = snapshot(dir);
    expect(s1.orders.length).toBeGreaterThan(0);

    // SIGTERM → restart: the state is restored, nothing closed, and trading goes on.
    const second = startBot(['run', '--config', config]);
    await second.waitFor('embedded simulator state restored');
    const more = await second.waitFor('order confirmed'); // this run's own log
    expect(Number(more.quantity)).toBeGreaterThan(0);
    await stop(second);
    expect(notRestored(second)).toEqual([]);
    const s2 = snapshot(dir);
    expectKept(s1, s2);
    expect(s2.orders.length).toBeGreaterThan(s1.orders.length);
    // The clock went on from where the first run stopped.
    expect(s2.orders.at(-1)!.created_at).toBeGreaterThan(s1.latest);

    // SIGKILL right after an order: the state file already has it.
    const third = startBot(['run', '--config', config]);
    await third.waitFor('order confirmed');
    third.child.kill('SIGKILL');
    expect((await third.exit).signal).toBe('SIGKILL');
    const s3 = snapshot(dir);
    expect(s3.orders.length).toBeGreaterThan(s2.orders.length);

    const fourth = startBot(['run', '--config', config]);
    await fourth.waitFor('embedded simulator state restored');
    await fourth.waitFor('packbot running');
    await fourth.waitFor('order confirmed');
    await stop(fourth);
    expect(notRestored(fourth)).toEqual([]);
    const s4 = snapshot(dir);
    expectKept(s3, s4);
    expect(s4.unresolved).toBe(0);
    expect(s4.orders.length).toBeGreaterThan(s3.orders.length);
  });

  it('falls back to closing the previous session when the state file is for another seed', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, {
      baseUrl: 'embedded',
      keyEnv: 'PB_UNSET_KEY',
      extra: 'sim:\n  speed: 60\n',
    });
    const first = startBot(['run', '--config', config]);
    await first.waitFor('order confirmed');
    await stop(first);

    const other = writeConfig(dir, {
      baseUrl: 'embedded',
      keyEnv: 'PB_UNSET_KEY',
      extra: 'sim:\n  speed: 60\n  seed: 2\n',
    });
    const second = startBot(['run', '--config', other]);
    const warned = await second.waitFor('embedded simulator state not restored');
    expect(String(warned.reason)).toContain('sim.seed 1');
    await second.waitFor('packbot running');
    await stop(second);
  });
});
