/**
 * What the HTTP server needs from the running bot, as two small interfaces defined here (obs is
 * below bot: the runner passes an implementation in, `src/bot/views/read-model.ts`). `BotView` only reads;
 * `BotControl` acts, every action through the ledger (docs/api.md).
 */
import type {
  BotEvent,
  ControlResult,
  ListingsResponse,
  OrdersResponse,
  PnlResponse,
  PullsResponse,
  ScoresResponse,
  StatusResponse,
} from './api-schemas.js';

export interface ReadQuery {
  /** Only this account (default: all). */
  account?: string;
  /** How many rows at most. */
  limit?: number;
  /** Orders: only those in doubt. */
  inDoubt?: boolean;
}

export interface BotView {
  status(): StatusResponse;
  pnl(q: ReadQuery): PnlResponse;
  pulls(q: ReadQuery): PullsResponse;
  orders(q: ReadQuery): OrdersResponse;
  listings(q: ReadQuery): ListingsResponse;
  scores(q: ReadQuery): ScoresResponse;
  /**
   * What changed since `cursor` (undefined: start now, no events). The events stream calls it
   * every second per client; it must be cheap.
   */
  changes(cursor: unknown): { cursor: unknown; events: BotEvent[] };
}

/** Who asked (the token's name) and why (the request's `reason`): logged and kept in the ledger. */
export interface ActionMeta {
  by: string;
  reason: string;
}

/** A card, or every card. */
export type CardTarget = { cardId: string } | { all: true };

export interface BotControl {
  pause(meta: ActionMeta): Promise<ControlResult>;
  resume(meta: ActionMeta): Promise<ControlResult>;
  /** Takes listings off the market; the cards are then held (sold back only on request). */
  delist(target: CardTarget, meta: ActionMeta): Promise<ControlResult>;
  /** Sells cards back now (listed ones are delisted first). */
  sellBack(target: CardTarget, meta: ActionMeta): Promise<ControlResult>;
  /** Re-reads and validates the strategies; keeps the old ones on any error. */
  reload(meta: ActionMeta): Promise<ControlResult>;
}
