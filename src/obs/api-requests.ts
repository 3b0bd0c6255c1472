/**
 * What the bot's HTTP server takes: the reads' query parameters and the control actions' bodies,
 * as zod schemas the route table (`routes.ts`) declares. The router parses with them (400 with the
 * first issue's message) and the OpenAPI document shows them (docs/api.md).
 */
import { z } from 'zod';
import type { ReadQuery } from './bot-view.js';

const Account = z.string().describe('only this account (default: every account)');
const Limit = z.coerce
  .number({ error: 'a whole number, 1 or more' })
  .int({ error: 'a whole number, 1 or more' })
  .min(1, { error: 'a whole number, 1 or more' })
  .transform((n) => Math.min(1000, n))
  .describe('rows at most (more than 1000 count as 1000)');
const InDoubt = z
  .enum(['true', '1', 'false', '0'], { error: 'true or false' })
  .transform((v) => v === 'true' || v === '1')
  .describe('true: only the orders in doubt');

/** Drops absent parameters: a `ReadQuery` has no key it was not given. */
function readQuery(q: { account?: string; limit?: number; in_doubt?: boolean }): ReadQuery {
  const out: ReadQuery = {};
  if (q.account !== undefined) out.account = q.account;
  if (q.limit !== undefined) out.limit = q.limit;
  if (q.in_doubt === true) out.inDoubt = true;
  return out;
}

export const AccountQuery = z.object({ account: Account.optional() }).transform(readQuery);
export const PageQuery = z
  .object({ account: Account.optional(), limit: Limit.optional() })
  .transform(readQuery);
export const OrdersQuery = z
  .object({ account: Account.optional(), limit: Limit.optional(), in_doubt: InDoubt.optional() })
  .transform(readQuery);

const REASON = 'give a "reason" (why, for the log and the ledger)';
const TARGET = 'give either "card_id": "<id>" or "all": true';

const Reason = z
  .string({ error: REASON })
  .trim()
  .min(1, { error: REASON })
  .transform((s) => s.slice(0, 500))
  .describe('why: goes into the log and the ledger (the first 500 characters)');

/** pause, resume, reload. */
export const ActionBody = z.object({ reason: Reason });

/** delist, sell-back: one card, or every card. */
export const CardActionBody = z
  .object({
    reason: Reason,
    card_id: z.string({ error: TARGET }).min(1, { error: TARGET }).optional().describe('this card'),
    all: z.boolean({ error: TARGET }).optional().describe('true: every card (give no card_id then)'),
  })
  .refine((b) => (b.all === true) !== (b.card_id !== undefined), { error: TARGET })
  .describe('a reason, and either card_id or all: true');

/** Request bodies by the name of their OpenAPI component. */
export const API_REQUESTS = { action: ActionBody, 'card-action': CardActionBody } as const;
