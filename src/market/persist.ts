/**
 * Saving and restoring a market's whole state (docs/simulator.md, "State persistence").
 *
 * Format: one line of JSON (the header: format, version, the world's identity, seed, the clock's
 * time at the save, caller metadata), a newline, then the state as `node:v8` structured-clone
 * bytes (Map, Set, typed arrays, shared references and -0/NaN survive as they are). Structured
 * clone drops prototypes, so the few class instances in the state (Rng streams, samplers, the
 * fault injector) are listed next to it and get their prototype back on restore; any other class
 * instance makes the save fail rather than come back as a plain object.
 */
import { createHash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import { Rng } from '../core/prng.js';
import { Faults } from './faults.js';
import { setDrawTables } from './inventory.js';
import { emptyReport, type ReportLog, recordOpening } from './report-log.js';
import { AliasTable, FenwickTree, UniformBag } from './sampler.js';
import type { MarketState } from './state.js';
import type { World } from './world-schema.js';

export const STATE_FORMAT = 'packbot.sim-state';
export const STATE_VERSION = 1;

export interface StateHeader {
  format: typeof STATE_FORMAT;
  version: number;
  /** sha256 of the world (as JSON) and the seed: a state only restores into the same world+seed. */
  identity: string;
  world: string | undefined;
  seed: number;
  /** The market clock's time when the state was written (epoch ms). */
  savedAt: number;
  /** The SimClock's offset at the save, when the market ran on one. */
  clockOffsetMs?: number;
  /** Caller data kept with the state (embedded mode keeps its configured seed here). */
  meta?: Record<string, unknown>;
}

export class StateMismatchError extends Error {
  override name = 'StateMismatchError';
}

const CLASSES: Record<string, { prototype: object }> = { Rng, UniformBag, AliasTable, FenwickTree, Faults };
const NAME_OF = new Map<object, string>(Object.entries(CLASSES).map(([n, c]) => [c.prototype, n]));

export function worldIdentity(world: World, seed: number): string {
  return createHash('sha256')
    .update(JSON.stringify(world))
    .update(`\u0000seed:${seed >>> 0}`)
    .digest('hex');
}

/** Every class instance reachable from `root`, with its class name; throws on an unknown class. */
function classInstances(root: unknown): [object, string][] {
  const out: [object, string][] = [];
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x !== 'object' || x === null || seen.has(x)) continue;
    if (typeof x === 'function') throw new TypeError('cannot save a function in the market state');
    seen.add(x);
    if (ArrayBuffer.isView(x)) continue;
    if (x instanceof Map) {
      for (const [k, v] of x) stack.push(k, v);
      continue;
    }
    if (x instanceof Set) {
      for (const v of x) stack.push(v);
      continue;
    }
    const proto = Object.getPrototypeOf(x) as object | null;
    if (proto !== null && proto !== Object.prototype && proto !== Array.prototype) {
      const name = NAME_OF.get(proto);
      if (!name)
        throw new TypeError(
          `cannot save a ${(x as { constructor?: { name?: string } }).constructor?.name ?? 'class'} instance in the market state`,
        );
      out.push([x, name]);
    }
    for (const v of Object.values(x)) stack.push(v);
  }
  return out;
}

interface Payload {
  state: MarketState;
  faults: Faults;
  classes: [object, string][];
}

export function encodeState(header: StateHeader, state: MarketState, faults: Faults): Buffer {
  // An order still running has changed nothing but its idempotency entry; it is not kept, so the
  // restored market lets a retry with the same key run (instead of answering 409 forever).
  const kept = {
    ...state,
    orders: new Map([...state.orders].filter(([, o]) => o.state === 'finished')),
    report: usedRows(state.report),
  };
  const payload: Payload = { state: kept, faults, classes: [] };
  payload.classes = classInstances({ state: kept, faults });
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), serialize(payload)]);
}

/** The report's columns cut to the rows kept (their spare capacity is up to as much again). */
function usedRows(r: ReportLog): ReportLog {
  return {
    ...r,
    at: r.at.slice(0, r.n),
    amountCents: r.amountCents.slice(0, r.n),
    user: r.user.slice(0, r.n),
    pool: r.pool.slice(0, r.n),
  };
}

/** The header of a saved state (cheap: the state itself is not decoded). */
export function readStateHeader(buf: Buffer): StateHeader {
  const nl = buf.indexOf(10);
  let header: Partial<StateHeader> | undefined;
  try {
    header = nl > 0 ? (JSON.parse(buf.subarray(0, nl).toString('utf8')) as Partial<StateHeader>) : undefined;
  } catch {
    header = undefined;
  }
  if (!header || header.format !== STATE_FORMAT)
    throw new StateMismatchError('not a simulator state file (no packbot.sim-state header)');
  if (header.version !== STATE_VERSION)
    throw new StateMismatchError(
      `simulator state format version ${String(header.version)} is not supported (expected ${STATE_VERSION})`,
    );
  if (
    typeof header.identity !== 'string' ||
    typeof header.seed !== 'number' ||
    typeof header.savedAt !== 'number'
  )
    throw new StateMismatchError('simulator state header is incomplete');
  return header as StateHeader;
}

/** Decodes a state written for `world` + `seed`; throws StateMismatchError for any other. */
export function decodeState(
  buf: Buffer,
  world: World,
  seed: number,
): { header: StateHeader; state: MarketState; faults: Faults } {
  const header = readStateHeader(buf);
  if (header.seed >>> 0 !== seed >>> 0)
    throw new StateMismatchError(
      `simulator state was written for seed ${header.seed}, this market has seed ${seed}`,
    );
  if (header.identity !== worldIdentity(world, seed))
    throw new StateMismatchError(
      `simulator state was written for another world (${header.world ?? 'unnamed'}, seed ${header.seed}) than this one (${world.name ?? 'unnamed'}, seed ${seed})`,
    );
  const payload = deserialize(buf.subarray(buf.indexOf(10) + 1)) as Payload;
  for (const [obj, name] of payload.classes) {
    const cls = CLASSES[name];
    if (!cls) throw new StateMismatchError(`simulator state holds an unknown class '${name}'`);
    Object.setPrototypeOf(obj, cls.prototype);
    if (cls === Rng) Rng.revive(obj as Rng);
  }
  upgrade(payload.state);
  return { header, state: payload.state, faults: payload.faults };
}

/** Fields a state written before they existed lacks get their empty value (decodeState does this). */
export function upgrade(state: MarketState): void {
  const inv = state.inv as Partial<MarketState['inv']> & MarketState['inv'];
  inv.free ??= [];
  inv.goneIds ??= new Map();
  inv.releasedTotal ??= 0;
  for (const p of inv.pools) if (p.bandOdds === undefined) setDrawTables(p);
  // The report was an array of row objects, every opening included.
  if (Array.isArray(state.report)) {
    const rows = state.report as unknown as {
      at: number;
      userId: string;
      amountCents: number;
      source: string;
      packType: string;
      internal: boolean;
    }[];
    const log = emptyReport();
    for (const r of rows) {
      const pool = inv.pools.findIndex(
        (p) => p.spec.pack_type === r.packType && (p.spec.report_source ?? p.category) === r.source,
      );
      recordOpening(log, { ...r, pool: Math.max(0, pool) });
    }
    state.report = log;
  }
}
