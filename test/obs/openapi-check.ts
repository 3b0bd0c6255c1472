/**
 * Checks an answer of the bot's HTTP server against `schemas/openapi.json`: its status and media
 * type are the document's for that route, the document's schema there is `z.toJSONSchema` of the
 * route's zod schema (so the zod parse below is the document's check), and the body parses with it.
 * Used on a fake bot (test/obs) and on a running one (test/e2e/api.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { z } from 'zod';
import { repoRoot } from '../../src/config/json-schemas.js';
import { API_SCHEMAS } from '../../src/obs/api-schemas.js';
import { jsonSchemaOf } from '../../src/obs/openapi.js';
import { answerType, type Route, routeName } from '../../src/obs/route.js';

type Json = Record<string, unknown>;

export const readOpenApi = (): Json =>
  JSON.parse(readFileSync(join(repoRoot(), 'schemas', 'openapi.json'), 'utf8')) as Json;

function deref(doc: Json, v: Json): Json {
  const ref = v.$ref;
  if (typeof ref !== 'string') return v;
  let at: unknown = doc;
  for (const part of ref.replace(/^#\//, '').split('/')) at = (at as Json)[part];
  return at as Json;
}

/** The document's response for a route and status, `$ref` resolved; undefined when undeclared. */
export function documentedResponse(doc: Json, r: Route, status: number): Json | undefined {
  const op = ((doc.paths as Json)[r.path] as Json | undefined)?.[r.method.toLowerCase()] as Json | undefined;
  const res = (op?.responses as Json | undefined)?.[String(status)] as Json | undefined;
  return res === undefined ? undefined : deref(doc, res);
}

/** The zod schema the route declares for `status`: its own answer, or the router's error body. */
function zodFor(r: Route, status: number): z.ZodType {
  return r.answers[status]?.schema ?? API_SCHEMAS.error;
}

/** The `data:` of each event in a server-sent events text. */
const eventData = (text: string): unknown[] =>
  text
    .split('\n\n')
    .map((block) => block.split('\n').filter((l) => l.startsWith('data: ')))
    .filter((lines) => lines.length > 0)
    .map((lines) => JSON.parse(lines.map((l) => l.slice('data: '.length)).join('\n')));

/**
 * Asserts the answer is as the document says: declared status, declared media type, the
 * document's schema = z.toJSONSchema of the route's, and a body of that schema. 421 has no body.
 */
export function expectDocumented(
  doc: Json,
  r: Route,
  answer: { status: number; type: string | null; body: string },
): void {
  const what = `${routeName(r)} → ${answer.status}`;
  const res = documentedResponse(doc, r, answer.status);
  expect(res, `${what}: not in schemas/openapi.json`).toBeDefined();
  if (answer.status === 421) {
    expect(answer.body, what).toBe('');
    return;
  }
  const content = res!.content as Record<string, { schema: Json }>;
  const type = answer.type ?? '';
  const declared = Object.keys(content).find((t) => type.split(';')[0] === t.split(';')[0]);
  expect(declared, `${what}: media type ${type}, the document has ${Object.keys(content)}`).toBeDefined();
  const schema = zodFor(r, answer.status);
  const declaredType = r.answers[answer.status] ? answerType(r.answers[answer.status]!) : declared!;
  expect(deref(doc, content[declared!]!.schema), `${what}: the document's schema`).toEqual(
    jsonSchemaOf(schema, 'output'),
  );
  expect(declared).toBe(declaredType);
  const bodies = declared!.startsWith('text/event-stream')
    ? eventData(answer.body)
    : declared!.startsWith('application/json')
      ? [JSON.parse(answer.body)]
      : [answer.body];
  expect(bodies.length, `${what}: no body`).toBeGreaterThan(0);
  for (const b of bodies) {
    const parsed = schema.safeParse(b);
    expect(parsed.success, `${what}: ${parsed.error?.message}`).toBe(true);
  }
}
