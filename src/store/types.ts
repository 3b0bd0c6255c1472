/**
 * Row shapes the ledger returns. Money is integer cents, times are epoch milliseconds (UTC).
 */
import type { Cents } from '../core/money.js';

export type IntentOperation = 'pack' | 'card';
export type IntentState = 'pending' | 'sent' | 'confirmed' | 'failed' | 'in_doubt';

export interface Intent {
  key: string;
  account: string;
  operation: IntentOperation;
  /** The exact JSON text of the request body, as persisted before the first send. */
  bodyJson: string;
  /** `bodyJson` parsed (key order preserved, so re-serialising gives the same text). */
  body: Record<string, unknown>;
  state: IntentState;
  attempts: number;
  errorCode: string | null;
  errorMessage: string | null;
  /** The response JSON text once confirmed. */
  responseJson: string | null;
  expectedValueCents: Cents | null;
  stdevCents: Cents | null;
  createdAt: number;
  updatedAt: number;
  /** When the first and the latest attempt were marked sent (ms); null before any. */
  firstSentAt: number | null;
  lastSentAt: number | null;
  /** When the latest attempt ended (an answer, an error or a transport failure); null if none did. */
  lastAnswerAt: number | null;
  /** Price per pack the order was planned at (the larger of any two prices seen), cents. */
  unitPriceCents: Cents | null;
  /** An attempt may have reached the service: no later refusal may close it as "not charged". */
  delivered: boolean;
  /** A re-send was answered as a new order would be: the service does not know the key. */
  keyForgotten: boolean;
  /** Set while the intent waits for an operator (`packbot orders settle`). */
  parkedAt: number | null;
  /** How a resolved intent was settled when no answer settled it (`evidence: …`, `operator: …`). */
  settledBy: string | null;
}

export interface OrderRow {
  checkoutId: string;
  intentKey: string;
  account: string;
  operation: IntentOperation;
  packType: string | null;
  category: string;
  riskLevel: string | null;
  cardId: string | null;
  quantity: number;
  totalChargedCents: Cents;
  remainingBalanceCents: Cents;
  /** Expected market value of everything the order pulls (from the scorer, at planning time). */
  expectedValueCents: Cents | null;
  /** Standard deviation of that value for the whole order. */
  stdevCents: Cents | null;
  createdAt: number;
  /** Card orders: the card's price and the buyer fee (total = price + fee); null for packs. */
  priceCents: Cents | null;
  feeCents: Cents | null;
  /** Card orders: `shop` or `listing` (another user's); null for packs. */
  source: string | null;
  /** The service answered `needs_review: true`: the card is ours, held until an operator looks. */
  needsReview: boolean;
}

export type PullStatus =
  | 'open'
  | 'sell_pending'
  | 'sold'
  | 'list_pending'
  | 'listed'
  | 'held'
  | 'shipped'
  | 'gone';
/** Statuses in which the card (or sealed pack) is still ours. */
export const OWNED_STATUSES: readonly PullStatus[] = [
  'open',
  'sell_pending',
  'list_pending',
  'listed',
  'held',
];

export interface PullRow {
  pullId: string;
  checkoutId: string;
  account: string;
  cardId: string;
  name: string;
  kind: 'card' | 'sealed_pack';
  valueCents: Cents;
  bucket: string;
  rarityTier: string;
  isChase: boolean;
  buybackCents: Cents | null;
  buybackRate: number | null;
  buybackValidUntil: number | null;
  afterCents: Cents | null;
  afterRate: number | null;
  afterValidUntil: number | null;
  /** When the pull was made, or the card bought. */
  pulledAt: number;
  status: PullStatus;
  statusAt: number;
  /**
   * `pack`: pulled from a pack; `purchase`: bought with a card purchase (pull id = its transaction
   * id, sell-back locked to min(price paid, value at purchase) until `buybackValidUntil`).
   */
  origin: PullOrigin;
  /** Card purchases: the price paid (fee excluded); null for pulls. */
  pricePaidCents: Cents | null;
  /**
   * A bought card's pull_id in the service's vault and sell-back when it is not its transaction
   * id (the spec does not show how it is named): learnt from the vault; null until then.
   */
  sellPullId?: string | null;
}

export type PullOrigin = 'pack' | 'purchase';

/** A pull as the ledger stores it before it has an order and a status (a pack's pull by default). */
export type NewPull = Omit<
  PullRow,
  'checkoutId' | 'account' | 'status' | 'statusAt' | 'origin' | 'pricePaidCents' | 'sellPullId'
> &
  Partial<Pick<PullRow, 'origin' | 'pricePaidCents'>>;

export type DecisionAction = 'sell_back' | 'list' | 'hold' | 'reprice' | 'delist';

export interface DecisionRow {
  id: number;
  pullId: string;
  action: DecisionAction;
  reason: string;
  priceCents: Cents | null;
  decidedAt: number;
}

export interface SellBackRow {
  id: number;
  pullId: string;
  cardId: string;
  account: string;
  status: 'sold' | 'already_sold' | 'failed';
  payoutCents: Cents;
  payoutRate: number | null;
  transactionId: string | null;
  error: string | null;
  /** 1 for the one row per pull whose payout counts; retries and `already_sold` echoes are 0. */
  counted: boolean;
  at: number;
}

export type ListingState = 'active' | 'delisted' | 'filled';

export interface ListingRow {
  listingId: string;
  cardId: string;
  pullId: string | null;
  account: string;
  priceCents: Cents;
  state: ListingState;
  createdAt: number;
  repricedAt: number | null;
  delistedAt: number | null;
  filledAt: number | null;
  /** What the account was credited for the sale; null while a sale waits for its credit. */
  proceedsCents: Cents | null;
  /** When a balance reading showed the credit (books.ts). */
  creditedAt: number | null;
  /** What the marketplace kept: price − proceeds. */
  feeCents: Cents | null;
}

export interface BalanceRow {
  id: number;
  account: string;
  balanceCents: Cents;
  source: string;
  at: number;
}
