/**
 * World files (`packbot.world/v1`) from disk; the default is the shipped `config/sim.yaml`. A world
 * file may `extends` another (a path relative to it, or `default`): its `dynamics` and `rules`
 * are merged field by field over the base's, any other section it gives replaces the base's. So
 * `packbot calibrate`'s output (extends: default, dynamics only) runs the default world with the
 * fitted dynamics.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { deepFreeze } from '../core/freeze.js';
import type { World } from '../market/world-schema.js';
import { WorldFile } from '../market/world-schema.js';
import { InputFileError, readSource, validateSource } from './load.js';
import { packageRoot } from './package-root.js';

/** Absolute path of `config/sim.yaml`, found from the package root so it also works from `dist/`. */
export const DEFAULT_WORLD_PATH = join(packageRoot(), 'config', 'sim.yaml');

/** Sections merged field by field over the base's (the others replace it). */
const MERGED = new Set(['dynamics', 'rules']);

export function loadWorld(path: string = DEFAULT_WORLD_PATH): World {
  return deepFreeze(WorldFile.parse(rawWorld(path, []))) as World;
}

/** The file's own content over its base's (each file validated on its own first, for its errors). */
function rawWorld(path: string, chain: string[]): Record<string, unknown> {
  const file = resolve(path);
  const src = readSource(path);
  validateSource(src, WorldFile);
  const own = src.data as Record<string, unknown>;
  const base = own.extends as string | undefined;
  if (base === undefined) return own;
  const basePath = base === 'default' ? DEFAULT_WORLD_PATH : resolve(dirname(file), base);
  const fail = (message: string): never => {
    const pos = src.locate(['extends']);
    throw new InputFileError([
      { file: path, line: pos?.line ?? 1, column: pos?.column ?? 1, path: 'extends', message },
    ]);
  };
  if (basePath === file || chain.includes(basePath))
    fail(`extends a world that extends this one (${[...chain, file, basePath].join(' -> ')})`);
  if (!existsSync(basePath)) fail(`no such world file: ${basePath}`);
  const merged: Record<string, unknown> = { ...rawWorld(basePath, [...chain, file]) };
  for (const [k, v] of Object.entries(own)) {
    if (k === 'extends') continue;
    merged[k] =
      MERGED.has(k) && typeof merged[k] === 'object' && merged[k] !== null
        ? { ...(merged[k] as object), ...(v as object) }
        : v;
  }
  return merged;
}
