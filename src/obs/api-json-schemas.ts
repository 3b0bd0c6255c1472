/**
 * The files the route table (routes.ts) writes, so they cannot drift from what the server does:
 * `schemas/api-<name>.schema.json` for each JSON answer a route declares (named in API_SCHEMAS),
 * `schemas/openapi.json` (openapi.ts) and the route table of docs/api.md (api-docs.ts). Tests
 * compare them with what this generates; regenerate every file of `schemas/`: `npm run schemas`.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { repoRoot } from '../config/json-schemas.js';
import { compareText } from '../core/compare-text.js';
import { staleApiDocs, writeApiDocs } from './api-docs.js';
import { API_SCHEMAS } from './api-schemas.js';
import { openApiDocument, schemaNames } from './openapi.js';
import type { Route, Tag } from './route.js';
import { ROUTES } from './routes.js';

/** Name → schema (and the tags of the routes answering it) of every named answer, the error body included. */
export function answerSchemas(
  routes: readonly Route[] = ROUTES,
): Map<string, { schema: z.ZodType; tags: Tag[] }> {
  const names = schemaNames();
  const out = new Map<string, { schema: z.ZodType; tags: Tag[] }>();
  const add = (schema: z.ZodType, tag: Tag) => {
    const name = names.get(schema);
    if (name === undefined) return;
    const entry = out.get(name) ?? { schema, tags: [] };
    entry.tags.push(tag);
    out.set(name, entry);
  };
  for (const r of routes) for (const a of Object.values(r.answers)) add(a.schema, r.tag);
  add(API_SCHEMAS.error, 'operations');
  return out;
}

/** File name → contents: one JSON Schema per answer, and the OpenAPI document. */
export function generateApiJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, { schema, tags }] of [...answerSchemas()].sort(([a], [b]) => compareText(a, b))) {
    // The answers of /api/v1 (the read and control tags) keep the titles they have always had.
    const where = tags.every((t) => t === 'read' || t === 'control') ? 'API /api/v1' : 'HTTP';
    const doc = { ...z.toJSONSchema(schema, { io: 'output' }), title: `packbot ${where} ${name}` };
    out[`api-${name}.schema.json`] = `${JSON.stringify(doc, null, 2)}\n`;
  }
  out['openapi.json'] = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
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
    console.log(`wrote ${writeApiDocs()}`);
  } else {
    const stale = [...staleApiJsonSchemas(dir), ...(staleApiDocs() ? ['docs/api.md (route table)'] : [])];
    if (stale.length > 0) {
      console.error(`stale API JSON Schemas: ${stale.join(', ')} (run npm run schemas)`);
      process.exitCode = 1;
    } else console.log('API JSON Schemas are up to date');
  }
}
