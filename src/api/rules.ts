/**
 * Every number the spec fixes, once, with the section it comes from. Defaults and checks elsewhere
 * (the client's request schemas, the simulator's world defaults, the strategy's listing model, the
 * backtest, the bot) refer to these. The simulator's world may override the service-side ones to
 * model another partner's settings; the bot reads the service's own values where it reports them.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

// ---- Sell-back ("States and transitions"; "Sell back", rule 3; "Vault entry")

/** Rate within the fresh window after the pull. */
export const FRESH_RATE = 0.9;
/** The fresh window: 5 minutes after the pull. */
export const FRESH_WINDOW_MS = 5 * MINUTE_MS;
/** Rate after the fresh window (of the value at pull for 7 days, then of the market value). */
export const LATE_RATE = 0.8;
/** For 7 days after acquisition, the sell-back offer is based on the value at acquisition. */
export const VALUE_LOCK_MS = 7 * DAY_MS;
export const VALUE_LOCK_DAYS = 7;

// ---- Defaults of omitted parameters ("Pack purchase", "Pack pool", "List packs", "Vault")

export const DEFAULT_CATEGORY = 'pokemon';
export const DEFAULT_RISK_LEVEL = 'standard';
export const DEFAULT_QUANTITY = 1;

// ---- Orders ("Limits"; "Pack purchase")

/** Packs per purchase request (and at most the pack's `max_quantity`). */
export const MIN_PACKS_PER_REQUEST = 1;
export const MAX_PACKS_PER_REQUEST = 10;
/** Default speed and daily ceiling ("set per partner and may differ"). */
export const DEFAULT_MIN_SECONDS_BETWEEN_PURCHASES = 60;
export const DEFAULT_MAX_PACKS_PER_DAY = 100;
/** `Idempotency-Key`: 8 to 128 characters of `A-Za-z0-9_-`. */
export const IDEMPOTENCY_KEY_RE = /^[A-Za-z0-9_-]{8,128}$/;
/** Card purchase buyer fee ("Card purchase", rule 1): 1 USD. */
export const CARD_FEE_USD = 1;

// ---- Sell-back requests and listings ("Sell back"; "List a card"; "Limits")

export const MAX_SELLBACK_ITEMS = 10;
/** A listing's price is at most this multiple of the card's market value. */
export const MAX_LISTING_MULTIPLE = 2;

// ---- Pages and windows ("Limits"; "Shop card listing"; "Vault"; "Purchase report")

export const PAGE_LIMITS = {
  vault: { max: 200, default: 100 },
  shopCards: { max: 1000, default: 500 },
  purchaseReport: { max: 1000, default: 500 },
} as const;
/** The purchase report's window: at most 31 days; `since` defaults to `until` − 7 days. */
export const REPORT_MAX_WINDOW_MS = 31 * DAY_MS;
export const REPORT_DEFAULT_WINDOW_MS = 7 * DAY_MS;
