/**
 * The worlds the chaos suite runs the bot against: the default server and three alternative legal
 * servers (config/worlds/alt-*.yaml: every choice the spec leaves open made otherwise, see
 * docs/simulator.md). A chaos run keeps its own packs, shop and limits (setup.ts) and takes a
 * world's `rules` for everything the spec leaves open, so the same attacks meet each server.
 */
import { join } from 'node:path';
import { packageRoot } from '../src/config/package-root.js';
import { DEFAULT_WORLD_PATH, loadWorld } from '../src/config/world-file.js';
import type { Rules } from '../src/market/world-schema.js';

const ALT_WORLD_NAMES = ['alt-fee10', 'alt-sorted', 'alt-slowpay'] as const;

/** The alternative worlds' files, in a fixed order. */
export const ALT_WORLDS: readonly string[] = ALT_WORLD_NAMES.map((n) =>
  join(packageRoot(), 'config', 'worlds', `${n}.yaml`),
);

/** `default` and the three alternatives: what `--worlds all` cycles through, seed by seed. */
export const ALL_WORLDS: readonly string[] = [DEFAULT_WORLD_PATH, ...ALT_WORLDS];

/** A short name for a world file in progress lines (`default`, `alt-fee10`, …). */
export function worldLabel(path: string): string {
  if (path === DEFAULT_WORLD_PATH) return 'default';
  return (path.split(/[\\/]/).pop() ?? path).replace(/\.ya?ml$/, '');
}

/** A world file's rules, every default filled in (`loadWorld` reports a bad file by line). */
export function worldRules(path: string): Rules {
  return { ...loadWorld(path).rules };
}
