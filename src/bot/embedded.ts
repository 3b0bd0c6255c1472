/**
 * Embedded mode: the simulator in-process on a free loopback port, reached over real HTTP by the
 * normal client, so `npm start` exercises exactly the code that trades live.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_WORLD_PATH, loadWorld } from '../config/world-file.js';
import type { Clock } from '../core/clock.js';
import { Market } from '../market/market.js';
import { readStateHeader, type StateHeader, worldIdentity } from '../market/persist.js';
import { type SimServer, startSimServer } from '../market/server.js';
import type { World } from '../market/world-schema.js';
import type { Logger } from '../obs/logger.js';
import type { Ledger } from '../store/ledger.js';
import { PRIVATE_FILE_MODE, tightenFile } from '../store/private-files.js';

export interface Embedded {
  market: Market;
  server: SimServer;
  /** Writes the simulator's state file now (also done after every mutating request). */
  save(): void;
}

/**
 * The embedded simulator's state file: next to the ledger and named after it
 * (`data/packbot.db` → `data/packbot.sim-state`), so two ledgers in one directory never share one.
 */
export function embeddedStatePath(ledgerPath: string): string {
  return `${ledgerPath.replace(/\.db$/, '')}.sim-state`;
}

/** The name every ledger in a directory once shared; still read when it is the only state there. */
const LEGACY_STATE_NAME = 'embedded-sim.state';

/**
 * Moves a state file saved under the old shared name to this ledger's name, when this ledger has
 * none yet. Moving (not copying) means only one ledger can ever adopt it. Returns the old path when
 * it was adopted.
 */
export function adoptLegacyState(statePath: string): string | undefined {
  const legacy = join(dirname(statePath), LEGACY_STATE_NAME);
  if (existsSync(statePath) || !existsSync(legacy)) return undefined;
  renameSync(legacy, statePath);
  tightenFile(statePath);
  return legacy;
}

/** A saved simulator state found on start: restorable, or the reason it is not. */
export type SavedSim =
  | { ok: true; buf: Buffer; header: StateHeader }
  | { ok: false; missing: boolean; reason: string; savedAt?: number };

/**
 * Reads the state file and checks it was written for this world and this configured seed (the
 * seed the market runs with may differ: a session closed without a state moves it on).
 */
export function readSavedSim(path: string, world: World, configSeed: number): SavedSim {
  if (!existsSync(path)) return { ok: false, missing: true, reason: `no simulator state file at ${path}` };
  let buf: Buffer;
  let header: StateHeader;
  try {
    buf = readFileSync(path);
    header = readStateHeader(buf);
  } catch (e) {
    return { ok: false, missing: false, reason: `${path}: ${e instanceof Error ? e.message : String(e)}` };
  }
  const base = header.meta?.configSeed;
  if (base !== configSeed)
    return {
      ok: false,
      missing: false,
      savedAt: header.savedAt,
      reason: `${path} was written with sim.seed ${String(base)}, the config now has ${configSeed}`,
    };
  if (header.identity !== worldIdentity(world, header.seed))
    return {
      ok: false,
      missing: false,
      savedAt: header.savedAt,
      reason: `${path} was written for another world ('${String(header.world)}' as it was then) than the one configured now ('${String(world.name)}')`,
    };
  return { ok: true, buf, header };
}

/** Temp file + fsync + rename: a reader (or a restart after a crash) sees the old or the new state. */
function writeAtomically(path: string, buf: Buffer): void {
  const tmp = `${path}.tmp`; // one writer per ledger (src/store/writer-lock.ts); a crash leaves it to be overwritten
  // Private like the ledger: 0600 when created; a temporary file left by a crash is tightened.
  const fd = openSync(tmp, 'w', PRIVATE_FILE_MODE);
  tightenFile(tmp);
  try {
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export async function startEmbedded(
  clock: Clock,
  options: {
    worldPath?: string | undefined;
    world?: World;
    seed: number;
    onError?: (err: unknown) => void;
    /** Keep the state in this file, written after every mutating request and by `save()`. */
    statePath?: string;
    /** Restore this state (checked: StateMismatchError when it is for another world or seed). */
    restore?: Buffer;
    /** The configured sim.seed, kept in the state file to recognise it on the next start. */
    configSeed?: number;
  },
): Promise<Embedded> {
  const world = options.world ?? loadWorld(options.worldPath ?? DEFAULT_WORLD_PATH);
  const market = options.restore
    ? Market.fromState(world, options.restore, { clock })
    : new Market(world, { clock, seed: options.seed });
  const { statePath } = options;
  const save = () => {
    if (!statePath) return;
    try {
      writeAtomically(statePath, market.saveState({ configSeed: options.configSeed ?? options.seed }));
    } catch (e) {
      options.onError?.(e);
    }
  };
  // Before the response goes out: whatever the bot has been told, the file already holds.
  if (statePath) {
    market.onMutation(save);
    save();
  }
  const server = await startSimServer({
    market,
    clock,
    host: '127.0.0.1',
    port: 0,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  return { market, server, save };
}

/**
 * The embedded simulator keeps its state in memory, so a restart meets a brand-new service while
 * the ledger remembers the previous one. What the old simulator held cannot be traded any more:
 * unresolved orders are closed as failed (re-sending them would place new orders), holdings and
 * listings are written off, and all of it is logged. Returns a seed offset so the new session's
 * ids never collide with ids the ledger already has.
 */
export function closePreviousEmbeddedSession(ledger: Ledger, log: Logger): number {
  const counts = ledger.intentCounts();
  const previous = Object.values(counts).reduce((a, b) => a + b, 0);
  let closed = 0;
  for (const intent of ledger.unresolvedIntents()) {
    ledger.failIntent(
      intent.key,
      'SIM_RESTARTED',
      'the embedded simulator restarted; its orders are gone',
      undefined,
      'the embedded simulator restarted without its state',
    );
    closed++;
  }
  for (const listing of ledger.activeListings())
    ledger.recordListingUpdate(listing.listingId, { delisted: true });
  let written = 0;
  for (const pull of ledger.holdings()) {
    ledger.markPullGone(pull.pullId, 'gone');
    written++;
  }
  if (closed + written > 0)
    log.warn(
      { orders: closed, holdings: written },
      'embedded simulator state does not survive a restart: previous session closed in the ledger',
    );
  return previous;
}
