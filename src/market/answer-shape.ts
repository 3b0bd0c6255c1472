/**
 * The last step of every answer: how its JSON objects are written. The spec lists the fields it
 * promises and nothing about others or about key order, so a legal service may add fields
 * (`rules.extra_fields`) and write keys in any order (`rules.key_order`). A client that reads
 * answers by name sees no difference; one that is strict about unknown fields or leans on order
 * breaks here, in the simulator, before it meets such a service. At the defaults an answer is
 * returned as built, untouched (pools are megabytes: no copy).
 */
import { Rng } from '../core/prng.js';
import { stamp } from './server-time.js';
import type { Rules } from './world-schema.js';

type ShapeRules = Pick<Rules, 'extra_fields' | 'key_order' | 'timestamp_fraction_digits' | 'timestamp_zone'>;

/** Fields added to every object: one of each JSON type a parser must skip. */
const EXTRA = { x_rev: 1, x_note: null, x_beta: false, x_tags: [] as string[] } as const;

export function shapeAnswer(answer: unknown, rules: ShapeRules, seed: number, servedAt: number): unknown {
  if (!rules.extra_fields && rules.key_order === 'as_built') return answer;
  const top =
    rules.extra_fields && isObject(answer)
      ? { ...answer, x_request: { served_at: stamp(rules, servedAt), server: 'packbot-sim' } }
      : answer;
  return shape(top, rules, seed);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function shape(v: unknown, rules: ShapeRules, seed: number): unknown {
  if (Array.isArray(v)) return v.map((x) => shape(x, rules, seed));
  if (!isObject(v)) return v;
  const entries: [string, unknown][] = Object.entries(v).map(([k, x]) => [k, shape(x, rules, seed)]);
  if (rules.extra_fields)
    for (const [k, x] of Object.entries(EXTRA)) if (!(k in v)) entries.push([k, Array.isArray(x) ? [] : x]);
  return Object.fromEntries(order(entries, rules.key_order, seed));
}

function order(entries: [string, unknown][], how: Rules['key_order'], seed: number): [string, unknown][] {
  switch (how) {
    case 'as_built':
      return entries;
    case 'sorted':
      return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    case 'reversed':
      return entries.reverse();
    case 'shuffled': {
      const p = permutation(
        entries.map(([k]) => k),
        seed,
      );
      return p.map((i) => entries[i]!);
    }
  }
}

/** Permutations by object shape and seed, so one shape is always written in one order. */
const PERMUTATIONS = new Map<string, number[]>();
const MAX_SHAPES = 4096;

function permutation(keys: readonly string[], seed: number): number[] {
  const id = `${seed}\u0000${keys.join('\u0000')}`;
  let p = PERMUTATIONS.get(id);
  if (p) return p;
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  const rng = new Rng(h >>> 0);
  p = keys.map((_, i) => i);
  for (let i = p.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  if (PERMUTATIONS.size >= MAX_SHAPES) PERMUTATIONS.clear();
  PERMUTATIONS.set(id, p);
  return p;
}
