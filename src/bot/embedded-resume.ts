/**
 * The embedded simulator at start-up: resumed from its saved state when it matches this world and
 * seed, else started fresh after closing the previous session in the ledger (docs/runner.md,
 * "Embedded restarts"); the runner's clock moves on so time never runs backwards across a restart.
 */
import type { BotConfig } from '../config/bot-config.js';
import { ScaledClock } from '../core/clock.js';
import { StateMismatchError } from '../market/persist.js';
import type { Logger } from '../obs/logger.js';
import type { Ledger } from '../store/ledger.js';
import type { ClockBox } from './common/clock-box.js';
import {
  adoptLegacyState,
  closePreviousEmbeddedSession,
  type Embedded,
  embeddedStatePath,
  readSavedSim,
  type SavedSim,
  startEmbedded,
} from './embedded.js';

/**
 * The embedded simulator, resumed from its saved state when it matches this world and seed, else
 * started fresh after closing the previous session in the ledger. Time never runs backwards across
 * a restart (`moveClock`: the runner owns the clock, tests bring their own).
 */
export async function resumeEmbedded(
  config: BotConfig,
  ledger: Ledger,
  clock: ClockBox,
  moveClock: boolean,
  log: Logger,
): Promise<Embedded> {
  const world = config.sim.world;
  if (!world) throw new Error('embedded mode without a validated world (config not from loadBotConfig)');
  const statePath = config.store.path === ':memory:' ? undefined : embeddedStatePath(config.store.path);
  const adopted = statePath ? adoptLegacyState(statePath) : undefined;
  if (adopted) log.info({ from: adopted, to: statePath }, 'embedded simulator state file renamed');
  const saved: SavedSim = statePath
    ? readSavedSim(statePath, world, config.sim.seed)
    : { ok: false, missing: true, reason: 'the ledger is in memory' };
  const floor = Math.max(saved.ok ? saved.header.savedAt : (saved.savedAt ?? 0), ledger.latestActivityAt());
  if (moveClock && floor >= clock.now()) {
    clock.set(new ScaledClock(floor + 1, config.sim.speed));
    log.info({ at: new Date(floor + 1).toISOString() }, 'clock resumes from the previous session');
  }
  const onError = (err: unknown) => log.error({ err }, 'embedded simulator error');
  let embedded: Embedded | undefined;
  if (saved.ok) {
    embedded = await startEmbedded(clock, {
      world,
      seed: saved.header.seed,
      restore: saved.buf,
      ...(statePath ? { statePath } : {}),
      configSeed: config.sim.seed,
      onError,
    }).catch((e: unknown) => {
      if (!(e instanceof StateMismatchError)) throw e;
      log.warn({ path: statePath, reason: e.message }, 'embedded simulator state not restored');
      return undefined;
    });
    if (embedded)
      log.info(
        { path: statePath, saved_at: new Date(saved.header.savedAt).toISOString(), seed: saved.header.seed },
        'embedded simulator state restored',
      );
  } else if (!saved.missing || ledger.latestActivityAt() > 0)
    log.warn({ path: statePath, reason: saved.reason }, 'embedded simulator state not restored');
  if (!embedded) {
    const offset = closePreviousEmbeddedSession(ledger, log);
    embedded = await startEmbedded(clock, {
      world,
      seed: (config.sim.seed + offset) % 2 ** 32,
      ...(statePath ? { statePath } : {}),
      configSeed: config.sim.seed,
      onError,
    });
  }
  log.info({ url: embedded.server.url, speed: config.sim.speed }, 'embedded simulator listening');
  return embedded;
}
