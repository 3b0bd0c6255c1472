/**
 * Dispatches a request to its route in the table (routes.ts) and nothing else, with one rule for
 * every route: an unknown path is 404, and so is a route whose needs are missing (no view, no
 * control token, no kill switch: it does not exist); a known path asked with another method is
 * 405; then the access check (401, 403), the query and body (400), and the handler. Every refusal
 * is `{ "error": … }` (docs/api.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { type AccessOptions, checkAccess } from './access.js';
import {
  type AnyReply,
  answerType,
  JSON_TYPE,
  type Need,
  type Route,
  type RouteContext,
  type RouteDeps,
  routeName,
  STREAMED,
} from './route.js';

/** What a request body may be at most; a control action's is a reason and a card id. */
const MAX_BODY = 16_384;

export interface RouterOptions extends AccessOptions {
  deps: RouteDeps;
}

/** The refusals the router itself answers for a route, for the OpenAPI document and the docs. */
export function routerRefusalsOf(r: Route): Record<number, string> {
  const out: Record<number, string> = {};
  if (r.query || r.body) out[400] = `a bad ${r.body ? 'body' : 'query parameter'}: the error says which`;
  if (r.needs.length > 0) out[404] = `the route does not exist without ${needsText(r.needs)}`;
  return out;
}

const NEED_TEXT: Record<Need, string> = {
  view: 'a running bot',
  control: "the bot's actions",
  'kill switch': 'a kill switch',
  token: 'a control token',
};

export const needsText = (needs: readonly Need[]): string => needs.map((n) => NEED_TEXT[n]).join(' and ');

class BadRequest extends Error {}

export function send(res: ServerResponse, r: AnyReply, declaredType = JSON_TYPE): void {
  const type = r.type ?? declaredType;
  const text = type === JSON_TYPE ? `${JSON.stringify(r.body)}\n` : String(r.body);
  res.writeHead(r.status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...r.headers });
  res.end(text);
}

const error = (status: number, message: string): AnyReply => ({ status, body: { error: message } });

/** The request handler of the table's routes (the Host check comes before it, server.ts). */
export function createRouter(routes: readonly Route[], o: RouterOptions) {
  const byPath = new Map<string, Route[]>();
  for (const r of routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  const has: Record<Need, () => boolean> = {
    view: () => o.deps.view !== undefined,
    control: () => o.deps.control !== undefined,
    'kill switch': () => o.deps.killSwitch !== undefined,
    token: () => o.tokens.length > 0,
  };

  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const method = req.method ?? 'GET';
    const atPath = (byPath.get(url.pathname) ?? []).filter((r) => r.needs.every((n) => has[n]()));
    const r = atPath.find((x) => x.method === method);
    if (!r) {
      req.resume();
      if (atPath.length === 0) return send(res, error(404, 'not found'));
      return send(res, {
        ...error(405, 'method not allowed'),
        headers: { Allow: atPath.map((x) => x.method).join(', ') },
      });
    }
    const name = routeName(r);
    const access = checkAccess(req, r.access, name, o);
    if ('refusal' in access) {
      req.resume();
      return send(res, access.refusal);
    }
    let query: unknown;
    let body: unknown;
    try {
      query = r.query ? parse(r.query, queryOf(url), (path) => `query parameter ${path}: `) : undefined;
      if (r.body) body = parse(r.body, await readBody(req), () => '');
      else req.resume();
    } catch (e) {
      if (e instanceof BadRequest) return send(res, error(400, e.message));
      throw e;
    }
    const reply = await r.handle(context(req, res, name, query, body, access.by, o.deps));
    if (reply === STREAMED) return;
    const declared = r.answers[reply.status];
    send(res, reply, declared ? answerType(declared) : JSON_TYPE);
  };
}

function context(
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  query: unknown,
  body: unknown,
  by: string | undefined,
  deps: RouteDeps,
): RouteContext<unknown, unknown> {
  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`${route} uses ${what} without declaring it in needs`);
    return v;
  };
  return {
    req,
    res,
    route,
    query,
    body,
    by,
    deps,
    get view() {
      return need(deps.view, 'the view');
    },
    get control() {
      return need(deps.control, 'the control');
    },
    get killSwitch() {
      return need(deps.killSwitch, 'the kill switch');
    },
  };
}

/** The query as an object of strings; an empty parameter (`?limit=`) counts as absent. */
function queryOf(url: URL): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of url.searchParams) if (v !== '' && !(k in q)) q[k] = v;
  return q;
}

function parse(schema: z.ZodType, input: unknown, prefix: (path: string) => string): unknown {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new BadRequest(`${prefix(issue.path.join('.'))}${issue.message}`);
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > MAX_BODY) throw new BadRequest('request body too large');
  }
  if (text.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new BadRequest('request body is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new BadRequest('request body must be a JSON object');
  return v as Record<string, unknown>;
}
