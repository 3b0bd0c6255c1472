/**
 * Every route of the bot's HTTP server, one declaration each (route.ts): the router serves these
 * and nothing else, `npm run schemas` writes the JSON Schemas, `schemas/openapi.json` and the route
 * table of docs/api.md from them, and the tests call each one on a running bot and check its
 * answer against the document. A new route is a row here (its answer schema in api-schemas.ts,
 * what it reads from the bot in bot-view.ts), then `npm run schemas`.
 */
import { z } from 'zod';
import { AccountQuery, ActionBody, CardActionBody, OrdersQuery, PageQuery } from './api-requests.js';
import {
  BotEvent,
  ControlResult,
  Health,
  KillSwitchStatus,
  ListingsResponse,
  NotReady,
  OrdersResponse,
  PnlResponse,
  PullsResponse,
  Ready,
  ScoresResponse,
  StatusResponse,
} from './api-schemas.js';
import type { ActionMeta, BotControl, CardTarget } from './bot-view.js';
import { dashboardAsset } from './dashboard-assets.js';
import { EVENTS_TYPE, streamEvents } from './events-stream.js';
import { type Route, route, STREAMED } from './route.js';

const Text = z.string();
const ok = <T>(body: T) => ({ status: 200 as const, body });

/** Answers of a control action: 200 done, 409 refused (the result says why). */
const CONTROL_ANSWERS = {
  200: { schema: ControlResult, description: 'done' },
  409: { schema: ControlResult, description: 'refused: a card not listed or not held, a reload refused' },
} as const;

const target = (b: { card_id?: string | undefined }): CardTarget =>
  b.card_id !== undefined ? { cardId: b.card_id } : { all: true };

function action(
  name: 'pause' | 'resume' | 'reload',
  summary: string,
  run: (c: BotControl, meta: ActionMeta) => Promise<ControlResult>,
): Route {
  return route({
    method: 'POST',
    path: `/api/v1/control/${name}`,
    access: 'control',
    needs: ['control', 'token'],
    tag: 'control',
    summary,
    body: ActionBody,
    answers: CONTROL_ANSWERS,
    handle: async (c) => reply(await run(c.control, { by: c.by!, reason: c.body.reason })),
  });
}

function cardAction(name: 'delist' | 'sell-back', summary: string): Route {
  return route({
    method: 'POST',
    path: `/api/v1/control/${name}`,
    access: 'control',
    needs: ['control', 'token'],
    tag: 'control',
    summary,
    body: CardActionBody,
    answers: CONTROL_ANSWERS,
    handle: async (c) => {
      const meta = { by: c.by!, reason: c.body.reason };
      const t = target(c.body);
      return reply(await (name === 'delist' ? c.control.delist(t, meta) : c.control.sellBack(t, meta)));
    },
  });
}

const reply = (r: ControlResult) =>
  r.ok ? { status: 200 as const, body: r } : { status: 409 as const, body: r };

/** The first version's pause and resume: token, no body; the same action as the API's when it has one. */
function legacy(name: 'pause' | 'resume'): Route {
  return route({
    method: 'POST',
    path: `/control/${name}`,
    access: 'control',
    needs: ['kill switch', 'token'],
    tag: 'first version',
    summary: `${name} opening packs (as POST /api/v1/control/${name}, with the route as the reason)`,
    answers: { 200: { schema: KillSwitchStatus, description: 'the kill switch now' } },
    handle: async (c) => {
      const control = c.deps.control;
      if (control) {
        const meta = { by: c.by!, reason: c.route };
        await (name === 'pause' ? control.pause(meta) : control.resume(meta));
        return ok(c.killSwitch.status());
      }
      const status = name === 'pause' ? c.killSwitch.pause() : c.killSwitch.resume();
      c.deps.logger?.warn(
        { route: c.route, paused: status.paused, reasons: status.reasons },
        'kill switch changed',
      );
      return ok(status);
    },
  });
}

function asset(path: string, file: string, type: string, summary: string): Route {
  return route({
    method: 'GET',
    path,
    access: 'open',
    tag: 'dashboard',
    summary,
    answers: { 200: { schema: Text, type, description: summary } },
    handle: () => dashboardAsset(file, type),
  });
}

export const ROUTES: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/v1/status',
    access: 'read',
    needs: ['view'],
    tag: 'read',
    summary: 'per account: balance, P&L, the books, packs, spend, pauses; the kill switch',
    answers: { 200: { schema: StatusResponse, description: 'the status now' } },
    handle: (c) => ok(c.view.status()),
  }),
  route({
    method: 'GET',
    path: '/api/v1/pnl',
    access: 'read',
    needs: ['view'],
    tag: 'read',
    summary: "per account: balance and cash P&L at every change, and the model's promise against it",
    query: PageQuery,
    answers: { 200: { schema: PnlResponse, description: 'at most `limit` points (default 500)' } },
    handle: (c) => ok(c.view.pnl(c.query)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/pulls',
    access: 'read',
    needs: ['view'],
    tag: 'read',
    summary: 'the newest pulls, with their latest decision and outcome',
    query: PageQuery,
    answers: { 200: { schema: PullsResponse, description: 'newest first (default 50)' } },
    handle: (c) => ok(c.view.pulls(c.query)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/orders',
    access: 'read',
    needs: ['view'],
    tag: 'read',
    summary: 'purchase orders and what they cost, or only those in doubt',
    query: OrdersQuery,
    answers: { 200: { schema: OrdersResponse, description: 'newest first (default 50)' } },
    handle: (c) => ok(c.view.orders(c.query)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/listings',
    access: 'read',
    needs: ['view'],
    tag: 'read',
    summary: 'active listings with their repricing schedule and sell-back deadline',
    query: AccountQuery,
    answers: { 200: { schema: ListingsResponse, description: 'every active listing' } },
    handle: (c) => ok(c.view.listings(c.query)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/scores',
    access: 'read',
    needs: ['view'],
    tag: 'read',
    summary: "per account: the open loop's latest scoring and what it decided",
    query: AccountQuery,
    answers: { 200: { schema: ScoresResponse, description: 'empty until the first scoring' } },
    handle: (c) => ok(c.view.scores(c.query)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/events',
    access: 'read',
    needs: ['view'],
    tag: 'read',
    summary: 'server-sent events: the status at once, then each pull, order, pause and status change',
    answers: {
      200: {
        schema: BotEvent,
        type: EVENTS_TYPE,
        description: 'a stream of events: `event:` is the type, `data:` one BotEvent as JSON',
      },
    },
    handle: (c) => {
      streamEvents(c.res, c.view, c.deps.eventsPollMs);
      return STREAMED;
    },
  }),
  action('pause', 'pause opening packs (selling and listings go on); kept across restarts', (c, m) =>
    c.pause(m),
  ),
  action('resume', 'lift the endpoint pause (a kill switch file still pauses)', (c, m) => c.resume(m)),
  cardAction('delist', 'take a listing (or every one) off the market; the cards are then held'),
  cardAction('sell-back', 'sell a card (or every card still ours) back now, delisting it first'),
  action('reload', 're-read and check the strategy files; on any error the old ones stay (409)', (c, m) =>
    c.reload(m),
  ),
  route({
    method: 'GET',
    path: '/control/status',
    access: 'read',
    needs: ['kill switch'],
    tag: 'first version',
    summary: 'the kill switch',
    answers: { 200: { schema: KillSwitchStatus, description: 'the kill switch now' } },
    handle: (c) => ok(c.killSwitch.status()),
  }),
  legacy('pause'),
  legacy('resume'),
  asset('/', 'index.html', 'text/html; charset=utf-8', 'the dashboard page'),
  asset('/dashboard.js', 'dashboard.js', 'text/javascript; charset=utf-8', "the dashboard's script"),
  asset('/dashboard.css', 'dashboard.css', 'text/css; charset=utf-8', "the dashboard's style sheet"),
  route({
    method: 'GET',
    path: '/metrics',
    access: 'metrics',
    tag: 'operations',
    summary: 'Prometheus metrics (docs/metrics.md)',
    answers: {
      200: { schema: Text, type: 'text/plain; version=0.0.4', description: 'the text exposition format' },
    },
    handle: async (c) => ({
      status: 200 as const,
      body: await c.deps.metrics.text(),
      type: c.deps.metrics.contentType,
    }),
  }),
  route({
    method: 'GET',
    path: '/healthz',
    access: 'open',
    tag: 'operations',
    summary: 'the process is alive',
    answers: { 200: { schema: Health, description: 'alive' } },
    handle: () => ok({ status: 'ok' as const }),
  }),
  route({
    method: 'GET',
    path: '/readyz',
    access: 'open',
    tag: 'operations',
    summary: 'the ledger is open and the last API request came back',
    answers: {
      200: { schema: Ready, description: 'ready' },
      503: { schema: NotReady, description: 'not ready, and why' },
    },
    handle: async (c) => {
      const r = await c.deps.ready();
      return r.ready
        ? ok({ status: 'ready' as const })
        : { status: 503 as const, body: { status: 'not ready' as const, reason: r.reason } };
    },
  }),
];
