/**
 * What one route of the bot's HTTP server is: method, path, who may call it, what it takes (query,
 * body) and answers (a zod schema per status), and its handler, in one declaration. The table of
 * them is `routes.ts`; the router (`router.ts`), the JSON Schemas and the OpenAPI document
 * (`api-json-schemas.ts`, `openapi.ts`) and the route table in docs/api.md are all read off it, so
 * a route cannot be served, described or typed in two ways.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { BotControl, BotView } from './bot-view.js';
import type { KillSwitch } from './kill-switch.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/**
 * Who may call a route (docs/api.md, Access): `open` anyone past the Host check; `read` anyone on
 * loopback while no control token is configured, else a control token (403 beyond loopback without
 * one); `control` a control token; `metrics` the metrics token when one is configured, else anyone.
 */
export type Access = 'open' | 'read' | 'control' | 'metrics';

/**
 * What a route needs to exist. Without it the route answers 404 to every method, so a bot without
 * a control token has no control routes at all (nobody who reaches the port can pause it).
 */
export type Need = 'view' | 'control' | 'kill switch' | 'token';

/** The groups of routes, in the order the docs and the OpenAPI document list them. */
export const TAGS = {
  read: "the read API: JSON answers from the ledger and the accounts' last reads",
  control: 'actions on the running bot, each logged and kept in the ledger with who and why',
  dashboard: "the dashboard's files (no data: the page then asks the read API)",
  operations: 'Prometheus metrics, liveness and readiness',
  'first version': 'the kill switch routes of the first version, kept working',
} as const;
export type Tag = keyof typeof TAGS;

export interface AnswerSpec<S extends z.ZodType = z.ZodType> {
  schema: S;
  /** The media type (default `application/json`); `text/event-stream`: `schema` is each event's data. */
  type?: string;
  /** One line: when the route answers this status. */
  description: string;
}

export type Answers = Readonly<Record<number, AnswerSpec>>;

/** What a handler answers: one of its declared statuses, with a body of that status's schema. */
export type Reply<A extends Answers> = {
  [S in keyof A & number]: {
    status: S;
    body: z.output<A[S]['schema']>;
    /** Replaces the declared media type (e.g. the registry's exact Prometheus content type). */
    type?: string;
    /** Beyond `Content-Type` and `Cache-Control: no-store` (which these may replace). */
    headers?: Readonly<Record<string, string>>;
  };
}[keyof A & number];

/** The handler wrote the answer itself (the events stream). */
export const STREAMED = 'streamed';

/** What the server hands every handler. */
export interface RouteDeps {
  metrics: Metrics;
  view: BotView | undefined;
  control: BotControl | undefined;
  killSwitch: KillSwitch | undefined;
  logger: Logger | undefined;
  /** The readiness check (`/readyz`). */
  ready: () => Promise<{ ready: boolean; reason?: string }>;
  /** How often the events stream looks for changes (ms). */
  eventsPollMs: number;
}

export interface RouteContext<Q, B> {
  req: IncomingMessage;
  /** For a handler that streams; any other returns its reply. */
  res: ServerResponse;
  /** `METHOD /path`, for logs. */
  route: string;
  query: Q;
  body: B;
  /** The name of the token presented (always set for `control` routes). */
  by: string | undefined;
  deps: RouteDeps;
  /** These throw unless the route declares the need (`needs`), which the router checks first. */
  view: BotView;
  control: BotControl;
  killSwitch: KillSwitch;
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteSpec<
  Q extends z.ZodType | undefined,
  B extends z.ZodType | undefined,
  A extends Answers,
> {
  method: 'GET' | 'POST';
  path: string;
  access: Access;
  needs?: readonly Need[];
  /** The group it is listed under (OpenAPI tag, docs table). */
  tag: Tag;
  /** One line: the OpenAPI summary and the docs table's. */
  summary: string;
  /** Parameters (an object of strings; empty ones count as absent); a failed parse answers 400. */
  query?: Q;
  /** The JSON body; a failed parse answers 400 with the first issue's message. */
  body?: B;
  answers: A;
  handle: (
    c: RouteContext<Out<Q>, Out<B>>,
  ) => Reply<A> | typeof STREAMED | Promise<Reply<A> | typeof STREAMED>;
}

/** A declaration with its types erased, as the table holds it. */
export interface Route {
  method: 'GET' | 'POST';
  path: string;
  access: Access;
  needs: readonly Need[];
  tag: Tag;
  summary: string;
  query: z.ZodType | undefined;
  body: z.ZodType | undefined;
  answers: Answers;
  handle: (
    c: RouteContext<unknown, unknown>,
  ) => AnyReply | typeof STREAMED | Promise<AnyReply | typeof STREAMED>;
}

export interface AnyReply {
  status: number;
  body: unknown;
  type?: string;
  headers?: Readonly<Record<string, string>>;
}

/** Declares a route: the handler's query, body and reply are typed by the schemas given. */
export function route<
  A extends Answers,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<Q, B, A>): Route {
  return {
    method: spec.method,
    path: spec.path,
    access: spec.access,
    needs: spec.needs ?? [],
    tag: spec.tag,
    summary: spec.summary,
    query: spec.query,
    body: spec.body,
    answers: spec.answers,
    handle: spec.handle as Route['handle'],
  };
}

export const JSON_TYPE = 'application/json';

/** The media type a route answers `status` with. */
export const answerType = (a: AnswerSpec): string => a.type ?? JSON_TYPE;

/** `METHOD /path`: a route's name in logs, tests and docs. */
export const routeName = (r: Pick<Route, 'method' | 'path'>): string => `${r.method} ${r.path}`;
