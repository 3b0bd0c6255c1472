/**
 * JSON Schemas of the read and control API's answers (`schemas/api-<name>.schema.json`), generated
 * from the zod schemas in `api-schemas.ts` so they cannot drift: a test compares the files with
 * `generateApiJsonSchemas()`. Regenerate every file of `schemas/`: `npm run schemas`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { repoRoot } from '../config/json-schemas.js';
import { API_SCHEMAS } from './api-schemas.js';

/** File name → contents, one per answer of `/api/v1/`. */
export function generateApiJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, schema] of Object.entries(API_SCHEMAS)) {
    const doc = { ...z.toJSONSchema(schema, { io: 'output' }), title: `packbot API /api/v1 ${name}` };
    out[`api-${name}.schema.json`] = `${JSON.stringify(doc, null, 2)}\n`;
  }
  return out;
}

export function staleApiJsonSchemas(dir = join(repoRoot(), 'schemas')): string[] {
  return Object.entries(generateApiJsonSchemas())
    .filter(([name, text]) => !existsSync(join(dir, name)) || readFileSync(join(dir, name), 'utf8') !== text)
    .map(([name]) => name);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = join(repoRoot(), 'schemas');
  if (process.argv.includes('--write')) {
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(generateApiJsonSchemas())) {
      writeFileSync(join(dir, name), text);
      console.log(`wrote ${join(dir, name)}`);
    }
  } else {
    const stale = staleApiJsonSchemas(dir);
    if (stale.length > 0) {
      console.error(`stale API JSON Schemas: ${stale.join(', ')} (run npm run schemas)`);
      process.exitCode = 1;
    } else console.log('API JSON Schemas are up to date');
  }
}
