/**
 * `packbot sim [--port N] [--world F] [--seed N] [--speed S]`: the simulated Partner API over HTTP
 * on 127.0.0.1. Its clock is wall time (S times faster with `--speed`) plus an offset that
 * `POST /sim/v1/clock/advance` adds to.
 * Prints exactly `listening on http://127.0.0.1:N` when ready; SIGTERM/SIGINT stop it (exit 0).
 */

import { DEFAULT_WORLD_PATH, loadWorld } from '../config/world-file.js';
import { UsageError } from '../core/errors.js';
import { Market } from '../market/market.js';
import { startSimServer } from '../market/server.js';
import { SimClock } from '../market/sim-clock.js';
import { intFlag, parseFlags } from './args.js';
import type { Command } from './command.js';

const DEFAULT_SIM_PORT = 8787;
const DEFAULT_SIM_SEED = 1;

export const command: Command = {
  summary: 'serve the simulated Partner API over HTTP',
  usage: `packbot sim [--port N] [--world FILE] [--seed N] [--speed S]

  --port N     port on 127.0.0.1 (default ${DEFAULT_SIM_PORT}; 0 picks a free one)
  --world F    world file (default config/sim.yaml)
  --seed N     seed of card generation, draws and dynamics (default ${DEFAULT_SIM_SEED})
  --speed S    simulated seconds per wall second, 1 to 10000 (default 1); GET /sim/v1/clock
               gives the clock's speed and anchor, for a client that keeps the same time

Dev keys of the default world: sk_sim_full, sk_sim_read, sk_sim_unlinked, sk_sim_disabled.
Admin API (no auth): GET /sim/v1/clock, POST /sim/v1/clock/advance {"seconds": N}, faults, state,
ledger, reset, ship; see docs/simulator.md.`,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        port: { type: 'string' },
        world: { type: 'string' },
        seed: { type: 'string' },
        speed: { type: 'string' },
      },
      'sim',
    );
    if (positionals.length > 0) throw new UsageError(`sim: unexpected argument '${positionals[0]}'`);
    const port = intFlag(values.port, 'port', DEFAULT_SIM_PORT, { min: 0, max: 65535 });
    const seed = intFlag(values.seed, 'seed', DEFAULT_SIM_SEED, { min: 0, max: 2 ** 32 - 1 });
    const speed = values.speed === undefined ? 1 : Number(values.speed);
    if (!Number.isFinite(speed) || speed < 1 || speed > 10_000)
      throw new UsageError(`sim: --speed must be a number from 1 to 10000, got '${values.speed}'`);
    const world = loadWorld(values.world ?? DEFAULT_WORLD_PATH);
    const clock = new SimClock(undefined, speed);
    const market = new Market(world, { clock, seed });
    let server: Awaited<ReturnType<typeof startSimServer>>;
    try {
      server = await startSimServer({ market, clock, port });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new UsageError(`sim: port ${port} is already in use`);
      if (code === 'EACCES') throw new UsageError(`sim: not allowed to listen on port ${port}`);
      throw e;
    }
    process.stdout.write(`listening on ${server.url}\n`);
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        resolve();
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    });
    await server.close();
    return 0;
  },
};
