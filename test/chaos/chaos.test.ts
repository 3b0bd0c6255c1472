/**
 * The chaos suite, short: the built bot against `packbot sim` through the fault proxy, SIGKILLed
 * a few times under each fault family, then audited against the simulator's books. The long run
 * is `npm run chaos -- --kills 100` (docs/reliability.md).
 */
import { describe, expect, it } from 'vitest';
import { type AuditResult, summaryLine } from '../../chaos/audit.js';
import { runChaos } from '../../chaos/harness.js';
import { isBuilt } from '../../chaos/processes.js';
import type { Scenario } from '../../chaos/scenarios.js';
import { ALT_WORLDS } from '../../chaos/worlds.js';

const KILLS = 3;
/**
 * Above vitest's 300 s: every wait of a run is bounded (chaos/harness.ts), and on a busy machine a
 * case takes 30-110 s; only a run whose waits all reach their bounds comes near this.
 */
const HANG_MS = 600_000;

async function chaos(scenarios: Scenario[], seed: number, world?: string): Promise<AuditResult> {
  const r = await runChaos({ kills: KILLS, seed, scenarios, ...(world ? { world } : {}) });
  // Shown on failure: the summary line and every problem the audit found.
  const report = [...r.problems, summaryLine(r)].join('\n');
  expect(r.doubleCharges, report).toBe(0);
  expect(r.lostPulls, report).toBe(0);
  expect(r.capsKept, report).toBe(true);
  expect(r.orders, report).toBeGreaterThan(0);
  expect(r.charges, report).toBe(r.orders);
  return r;
}

// The suite runs the built CLI: without dist/ it is skipped (`npm run build`; `npm test` builds).
describe.skipIf(!isBuilt())('chaos suite (skipped when dist/ is not built)', { timeout: HANG_MS }, () => {
  it('500s: nothing charged twice, no pull lost, books equal, caps kept', async () => {
    const r = await chaos(['errors'], 7);
    expect(r.problems).toEqual([]);
    expect(r.moneyDiffCents).toBe(0);
    expect(r.ok).toBe(true);
  });

  it('dropped connections and malformed bodies: nothing charged twice, no pull lost, books equal', async () => {
    const r = await chaos(['drops', 'malformed'], 8);
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it('a server that forgets idempotency keys: nothing charged twice, no pull lost, books equal', async () => {
    const r = await chaos(['forget-keys'], 9);
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it('card buying killed with purchases on the wire: each sale charged once, booked to the cent', async () => {
    const r = await chaos(['cards'], 11);
    expect(r.problems).toEqual([]);
    expect(r.cardOrders, summaryLine(r)).toBeGreaterThan(0);
    expect(r.ok).toBe(true);
  });

  // A server that decides every choice the spec leaves open otherwise (config/worlds/alt-slowpay.yaml):
  // slow order answers, REST statuses for a re-sent listing, unknown fields, reversed keys.
  it('on another legal server: dropped connections and malformed bodies, books equal', async () => {
    const r = await chaos(['drops', 'malformed'], 8, ALT_WORLDS[2]);
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it('a pool that lies about price: spend stays within the caps', async () => {
    const r = await chaos(['price-zero'], 10);
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
  });
});
