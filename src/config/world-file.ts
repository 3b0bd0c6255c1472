/** World files (`packbot.world/v1`) from disk; the default is the shipped `config/sim.yaml`. */
import { join } from 'node:path';
import type { World } from '../market/world-schema.js';
import { WorldFile } from '../market/world-schema.js';
import { loadFile } from './load.js';
import { packageRoot } from './package-root.js';

/** Absolute path of `config/sim.yaml`, found from the package root so it also works from `dist/`. */
export const DEFAULT_WORLD_PATH = join(packageRoot(), 'config', 'sim.yaml');

export function loadWorld(path: string = DEFAULT_WORLD_PATH): World {
  return loadFile(path, WorldFile);
}
