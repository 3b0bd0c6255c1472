/**
 * `schemas/openapi.json`, the OpenAPI 3.1 document the route table writes: each answer's schema
 * there is `z.toJSONSchema` of the route's zod schema, Redocly's linter (offline, redocly.yaml)
 * finds nothing in it, and a client generated from it by openapi-typescript type-checks with
 * answer types equal to the zod schemas' own.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/config/json-schemas.js';
import { API_REQUESTS } from '../../src/obs/api-requests.js';
import { API_SCHEMAS } from '../../src/obs/api-schemas.js';
import { jsonSchemaOf, openApiDocument, schemaNames } from '../../src/obs/openapi.js';
import { answerType, routeName } from '../../src/obs/route.js';
import { ROUTES } from '../../src/obs/routes.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { documentedResponse, readOpenApi } from './openapi-check.js';

afterAll(removeTempDirs);

const run = promisify(execFile);
const ROOT = repoRoot();
type Json = Record<string, unknown>;

describe('schemas/openapi.json', () => {
  const doc = readOpenApi();

  it('is what the route table generates (regenerate: npm run schemas)', () => {
    expect(doc).toEqual(openApiDocument());
  });

  it('has each route once, every answer the z.toJSONSchema of the route’s zod schema', () => {
    const paths = doc.paths as Record<string, Json>;
    const operations = Object.entries(paths).flatMap(([p, item]) =>
      Object.keys(item).map((m) => `${m} ${p}`),
    );
    expect(operations.sort()).toEqual(ROUTES.map((r) => `${r.method.toLowerCase()} ${r.path}`).sort());
    for (const r of ROUTES)
      for (const [status, a] of Object.entries(r.answers)) {
        const content = documentedResponse(doc, r, Number(status))!.content as Record<
          string,
          { schema: Json }
        >;
        let schema = content[answerType(a)]!.schema;
        if (typeof schema.$ref === 'string')
          schema = (doc.components as { schemas: Record<string, Json> }).schemas[
            schema.$ref.split('/').pop()!
          ]!;
        expect(schema, `${routeName(r)} ${status}`).toEqual(jsonSchemaOf(a.schema, 'output'));
      }
  });

  it('holds every named schema as a component', () => {
    const components = Object.keys((doc.components as { schemas: Json }).schemas);
    expect(components).toHaveLength(Object.keys({ ...API_SCHEMAS, ...API_REQUESTS }).length);
    expect(schemaNames().size).toBe(components.length);
  });

  it('passes Redocly’s lint with no error or warning (and the lint does find a broken copy’s)', async () => {
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, Json>> };
    delete broken.paths['/healthz']!.get!.summary;
    const brokenPath = join(tempDir('packbot-openapi-'), 'broken.json');
    writeFileSync(brokenPath, JSON.stringify(broken));
    const lint = (file: string) =>
      run(
        process.execPath,
        [
          join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
          'lint',
          file,
          '--config',
          join(ROOT, 'redocly.yaml'),
          '--format',
          'json',
        ],
        // Offline: no usage report, no look for a newer version.
        {
          cwd: ROOT,
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      ).then(
        (r) => ({ code: 0, out: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
      );
    const [ours, theirs] = await Promise.all([lint('schemas/openapi.json'), lint(brokenPath)]);
    const report = JSON.parse(ours.out) as {
      totals: { errors: number; warnings: number };
      problems: unknown[];
    };
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(ours.code).toBe(0);
    expect(theirs.code).not.toBe(0);
    expect(theirs.out).toContain('operation-summary');
  });

  it('generates a client with openapi-typescript whose answer types are the zod schemas’', async () => {
    const dir = tempDir('packbot-openapi-ts-');
    writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(doc as never)));
    const names = schemaNames();
    const checks: string[] = [];
    for (const r of ROUTES) {
      const op = `paths[${JSON.stringify(r.path)}][${JSON.stringify(r.method.toLowerCase())}]`;
      for (const [status, a] of Object.entries(r.answers)) {
        const name = names.get(a.schema);
        if (name === undefined) continue; // text: a string
        const got = `${op}['responses'][${status}]['content'][${JSON.stringify(answerType(a))}]`;
        checks.push(`same<${got}, Answer<${JSON.stringify(name)}>>(true);`);
      }
      if (r.body) {
        const name = names.get(r.body)!;
        checks.push(
          `same<NonNullable<${op}['requestBody']>['content']['application/json'], Body<${JSON.stringify(name)}>>(true);`,
        );
      }
    }
    const schemas = JSON.stringify(join(ROOT, 'src/obs/api-schemas.js'));
    const requests = JSON.stringify(join(ROOT, 'src/obs/api-requests.js'));
    writeFileSync(
      join(dir, 'client.mts'),
      `import type { paths } from './api.js';
import type { API_SCHEMAS } from ${schemas};
import type { API_REQUESTS } from ${requests};

type Answer<K extends keyof typeof API_SCHEMAS> = (typeof API_SCHEMAS)[K]['_zod']['output'];
type Body<K extends keyof typeof API_REQUESTS> = (typeof API_REQUESTS)[K]['_zod']['input'];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
declare function same<A, B>(ok: Same<A, B>): void;
// @ts-expect-error: two different answers are not the same type (the check can fail).
same<Answer<'status'>, Answer<'pnl'>>(true);

// What a client written against the document reads and sends.
type Status = paths['/api/v1/status']['get']['responses'][200]['content']['application/json'];
export const balance = (s: Status): number | null => s.accounts[0]?.balance_usd ?? null;
export const delist: NonNullable<paths['/api/v1/control/delist']['post']['requestBody']>['content']['application/json'] =
  { reason: 'closing shop', all: true };

${checks.join('\n')}
`,
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext'];
    const result = await run(process.execPath, [tsc, ...args, join(dir, 'client.mts')], { cwd: dir }).then(
      () => '',
      (e: { stdout: string }) => e.stdout,
    );
    expect(result).toBe('');
    expect(checks.length).toBeGreaterThan(ROUTES.length);
  });
});
