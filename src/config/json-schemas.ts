/**
 * JSON Schemas for editors (yaml-language-server), generated from the zod schemas so they cannot
 * drift: a test compares `schemas/*.json` with `generateJsonSchemas()`.
 * Regenerate every file of `schemas/`: `npm run schemas` (this module's `--write`, then the API's).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { FORMATS } from './formats.js';

/** File name → file contents, for every registered format. */
export function generateJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [format, def] of Object.entries(FORMATS)) {
    // One schema per kind: older formats of a kind share the newest one's schema (listed first).
    if (out[`${def.kind}.schema.json`] !== undefined) continue;
    // `input`: the shape a person writes, where every defaulted field is optional.
    const schema = z.toJSONSchema(def.schema, { io: 'input', unrepresentable: 'any' });
    const doc = { ...schema, title: `packbot ${format}` };
    out[`${def.kind}.schema.json`] = `${JSON.stringify(doc, null, 2)}\n`;
  }
  return out;
}

/** The repository root: the nearest ancestor holding package.json (works from src/ and dist/). */
export function repoRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
  return dir;
}

/** Names of schema files that are missing or differ from what the zod schemas generate. */
export function staleJsonSchemas(dir = join(repoRoot(), 'schemas')): string[] {
  const stale: string[] = [];
  for (const [name, text] of Object.entries(generateJsonSchemas())) {
    const path = join(dir, name);
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) stale.push(name);
  }
  return stale;
}

export function writeJsonSchemas(dir = join(repoRoot(), 'schemas')): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, text] of Object.entries(generateJsonSchemas())) {
    writeFileSync(join(dir, name), text);
    written.push(join(dir, name));
  }
  return written;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--write')) {
    for (const f of writeJsonSchemas()) console.log(`wrote ${f}`);
  } else {
    const stale = staleJsonSchemas();
    if (stale.length > 0) {
      console.error(`stale JSON Schemas: ${stale.join(', ')} (run npm run schemas)`);
      process.exitCode = 1;
    } else console.log('JSON Schemas are up to date');
  }
}
