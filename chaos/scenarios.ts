/**
 * Fault families and the per-round plan. Each round draws (from the run's seed) which of the
 * selected families are on and how hard, so a seed replays the same choices; the wall-clock
 * instants the faults meet the bot's requests cannot be replayed exactly.
 */
import type { CrashPoint } from '../src/bot/spending/executor.js';
import type { Rng } from '../src/core/prng.js';
import { NO_MODES, type ProxyModes } from './proxy.js';
import { PACK } from './setup.js';

export const SCENARIOS = [
  'drops',
  'latency',
  'errors',
  'malformed',
  'forget-keys',
  'price-zero',
  'cards',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export const SCENARIO_HELP: Record<Scenario, string> = {
  drops: 'the simulator cuts connections before or after an order/sale/listing commits',
  latency: 'the simulator answers late, often beyond the bot timeout (2 s)',
  errors: 'the simulator answers 500s (a failed purchase is refunded)',
  malformed: 'the simulator answers 200 with a truncated JSON body',
  'forget-keys': 'the proxy swallows purchase answers and forwards re-sends under a fresh key',
  'price-zero': `the proxy serves price 0 in the pool of '${PACK}' (the pack list keeps the real price)`,
  cards: 'the bot buys shop cards: card purchases dropped, cut or 500, the bot killed with one on the wire',
};

/** Where a `cards` round's SIGKILL lands (the other families always use `timed`). */
export type KillPlan =
  | { kind: 'timed' }
  /** The bot is killed when the proxy holds its `nth` card purchase of the round; the held
   * request then reaches the simulator (`forward`) or never does. */
  | { kind: 'wire'; nth: number; forward: boolean }
  /** The bot kills itself (PACKBOT_CHAOS_CRASH_AT) at `point` of its `nth` card intent. */
  | { kind: 'crash'; point: CrashPoint; nth: number };

const CRASH_POINTS: readonly CrashPoint[] = ['after_intent', 'before_send', 'after_answer'];

/** Endpoints that move money or cards: where a fault is the most dangerous. */
const WRITES = [
  'POST /packs/purchase',
  'POST /cards/purchase',
  'POST /cards/sell-back',
  'POST /listings',
  'DELETE /listings',
];
const CARD_PURCHASE = 'POST /cards/purchase';
const READS = ['GET /vault', 'GET /catalog/packs/pool'];

export type SimFaults = Record<string, Record<string, number>>;

export interface RoundPlan {
  families: Scenario[];
  simFaults: SimFaults;
  proxy: ProxyModes;
  /** How long the bot trades (after its first order of the round) before the SIGKILL. */
  killAfterMs: number;
  kill: KillPlan;
}

const rate = (rng: Rng, lo: number, hi: number) => Math.round((lo + rng.next() * (hi - lo)) * 100) / 100;

function addRule(faults: SimFaults, endpoints: string[], rule: Record<string, number>): void {
  for (const e of endpoints) faults[e] = { ...faults[e], ...rule };
}

/** One or two of the selected families, at random strengths. */
export function planRound(rng: Rng, selected: readonly Scenario[]): RoundPlan {
  const families = new Set<Scenario>([selected[rng.int(selected.length)]!]);
  if (selected.length > 1 && rng.next() < 0.4) families.add(selected[rng.int(selected.length)]!);
  const simFaults: SimFaults = {};
  const proxy: ProxyModes = { ...NO_MODES };
  let kill: KillPlan = { kind: 'timed' };
  for (const f of families) {
    switch (f) {
      case 'drops':
        addRule(simFaults, WRITES, {
          drop_after_rate: rate(rng, 0.2, 0.6),
          drop_before_rate: rate(rng, 0, 0.2),
        });
        break;
      case 'latency':
        // Writes only: slow start-up reads would spend the round before the bot trades at all.
        addRule(simFaults, WRITES, { latency_ms: 200 + rng.int(2300) });
        break;
      case 'errors':
        addRule(simFaults, [...WRITES, ...READS], { error_rate: rate(rng, 0.1, 0.4) });
        break;
      case 'malformed':
        addRule(simFaults, [...WRITES, ...READS], { malformed_rate: rate(rng, 0.1, 0.4) });
        break;
      case 'forget-keys':
        proxy.forgetKeys = true;
        proxy.dropAfterRate = rate(rng, 0.3, 0.7);
        break;
      case 'price-zero':
        proxy.zeroPricePack = PACK;
        break;
      case 'cards': {
        // Milder than the pack families: each card order in doubt stops card buying until it is
        // settled (`orders.settle_seconds`), and a round should buy a run of cards first.
        addRule(simFaults, [CARD_PURCHASE], {
          drop_after_rate: rate(rng, 0.02, 0.1),
          drop_before_rate: rate(rng, 0, 0.05),
          error_rate: rate(rng, 0.02, 0.08),
        });
        const roll = rng.next();
        const nth = 1 + rng.int(8);
        if (roll < 0.4) kill = { kind: 'wire', nth, forward: rng.next() < 0.5 };
        else if (roll < 0.8)
          kill = { kind: 'crash', point: CRASH_POINTS[rng.int(CRASH_POINTS.length)]!, nth };
        break;
      }
    }
  }
  return { families: [...families], simFaults, proxy, killAfterMs: 50 + rng.int(1500), kill };
}

/** `a,b` → scenarios; throws with the unknown name. */
export function parseScenarios(text: string): Scenario[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (names.length === 0) throw new Error('--scenario needs at least one name');
  for (const n of names)
    if (!(SCENARIOS as readonly string[]).includes(n))
      throw new Error(`--scenario: unknown scenario '${n}' (known: ${SCENARIOS.join(', ')})`);
  return [...new Set(names)] as Scenario[];
}
