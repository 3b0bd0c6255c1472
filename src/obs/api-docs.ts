/**
 * The route table of docs/api.md, written from the route table (routes.ts) between two markers by
 * `npm run schemas`; a test fails while the page differs, so the docs list exactly the routes the
 * server answers.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../config/json-schemas.js';
import { jsonSchemaOf, schemaNames } from './openapi.js';
import { answerType, type Route, routeName } from './route.js';
import { needsText } from './router.js';
import { ROUTES } from './routes.js';

const BEGIN = '<!-- routes: written from src/obs/routes.ts by `npm run schemas` -->';
const END = '<!-- /routes -->';

const code = (s: string) => `\`${s}\``;
const keys = (schema: Route['query']) =>
  schema ? Object.keys((jsonSchemaOf(schema, 'input').properties as object | undefined) ?? {}) : [];

/** The markdown table: one row per route, in the table's order. */
function routeTableMarkdown(routes: readonly Route[] = ROUTES): string {
  const names = schemaNames();
  const rows = routes.map((r) => {
    const takes = [
      ...keys(r.query).map(code),
      ...(r.body ? [`body ${keys(r.body).map(code).join(', ')}`] : []),
    ].join(', ');
    const answers = Object.entries(r.answers)
      .map(([status, a]) => {
        const name = names.get(a.schema);
        const type = answerType(a).split(';')[0]!;
        const what =
          name === undefined
            ? type
            : `${code(`api-${name}`)}${type === 'text/event-stream' ? ' events' : ''}`;
        return `${status} ${what}`;
      })
      .join(', ');
    const access = r.access + (r.needs.length > 0 ? `, with ${needsText(r.needs)}` : '');
    return `| ${code(routeName(r))} | ${access} | ${takes} | ${answers} | ${r.summary} |`;
  });
  return ['| route | access | takes | answers | what |', '|---|---|---|---|---|', ...rows].join('\n');
}

const docsPath = () => join(repoRoot(), 'docs', 'api.md');

/** docs/api.md with the table between the markers replaced by the current one. */
function apiDocsWithTable(text: string): string {
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`docs/api.md: no "${BEGIN}" … "${END}" block`);
  return `${text.slice(0, begin)}${BEGIN}\n\n${routeTableMarkdown()}\n\n${text.slice(end)}`;
}

/** Whether the table in docs/api.md differs from the routes. */
export function staleApiDocs(path = docsPath()): boolean {
  const text = readFileSync(path, 'utf8');
  return apiDocsWithTable(text) !== text;
}

export function writeApiDocs(path = docsPath()): string {
  writeFileSync(path, apiDocsWithTable(readFileSync(path, 'utf8')));
  return path;
}
