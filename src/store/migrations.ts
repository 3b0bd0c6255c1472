/**
 * Ledger schema, as an append-only list of migrations. `PRAGMA user_version` records how many have
 * run; each runs in its own transaction, so a crash mid-upgrade leaves the previous version intact.
 * Never edit a released migration: add a new one.
 *
 * Conventions: money is INTEGER cents, times are INTEGER epoch milliseconds (UTC), rates are REAL.
 */
import type { Database } from 'better-sqlite3';

/**
 * A listing row's part of its account's totals (migration 9), added (`sign` '') or taken away
 * ('-'): its proceeds once filled; its fee and price once filled, credited and priced.
 */
function totalsPart(row: 'NEW' | 'OLD', sign: '' | '-'): string {
  const credited = `${row}.state = 'filled' AND ${row}.credited_at IS NOT NULL AND ${row}.fee_cents IS NOT NULL`;
  return `INSERT INTO listing_totals (account, proceeds_cents, fee_cents, fee_price_cents, fee_sales)
    VALUES (${row}.account,
      ${sign}CASE WHEN ${row}.state = 'filled' THEN COALESCE(${row}.proceeds_cents, 0) ELSE 0 END,
      ${sign}CASE WHEN ${credited} THEN ${row}.fee_cents ELSE 0 END,
      ${sign}CASE WHEN ${credited} THEN ${row}.price_cents ELSE 0 END,
      ${sign}CASE WHEN ${credited} THEN 1 ELSE 0 END)
    ON CONFLICT (account) DO UPDATE SET proceeds_cents = proceeds_cents + excluded.proceeds_cents,
      fee_cents = fee_cents + excluded.fee_cents, fee_price_cents = fee_price_cents + excluded.fee_price_cents,
      fee_sales = fee_sales + excluded.fee_sales;`;
}

export const MIGRATIONS: readonly string[] = [
  // 1: the initial ledger.
  `
  CREATE TABLE intents (
    key            TEXT PRIMARY KEY,
    account        TEXT NOT NULL,
    operation      TEXT NOT NULL CHECK (operation IN ('pack', 'card')),
    body           TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'confirmed', 'failed', 'in_doubt')),
    attempts       INTEGER NOT NULL DEFAULT 0,
    error_code     TEXT,
    error_message  TEXT,
    response       TEXT,
    expected_value_cents INTEGER,
    stdev_cents    INTEGER,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
  );
  CREATE INDEX intents_state ON intents (state);

  CREATE TABLE orders (
    checkout_id    TEXT PRIMARY KEY,
    intent_key     TEXT NOT NULL UNIQUE REFERENCES intents (key),
    account        TEXT NOT NULL,
    operation      TEXT NOT NULL CHECK (operation IN ('pack', 'card')),
    pack_type      TEXT,
    category       TEXT NOT NULL,
    risk_level     TEXT,
    card_id        TEXT,
    quantity       INTEGER NOT NULL,
    total_charged_cents     INTEGER NOT NULL,
    remaining_balance_cents INTEGER NOT NULL,
    expected_value_cents    INTEGER,
    stdev_cents    INTEGER,
    created_at     INTEGER NOT NULL
  );
  CREATE INDEX orders_created ON orders (created_at);

  CREATE TABLE pulls (
    pull_id        TEXT PRIMARY KEY,
    checkout_id    TEXT NOT NULL REFERENCES orders (checkout_id),
    account        TEXT NOT NULL,
    card_id        TEXT NOT NULL,
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('card', 'sealed_pack')),
    value_cents    INTEGER NOT NULL,
    bucket         TEXT NOT NULL,
    rarity_tier    TEXT NOT NULL,
    is_chase       INTEGER NOT NULL,
    buyback_cents  INTEGER,
    buyback_rate   REAL,
    buyback_valid_until INTEGER,
    after_cents    INTEGER,
    after_rate     REAL,
    after_valid_until   INTEGER,
    pulled_at      INTEGER NOT NULL,
    status         TEXT NOT NULL CHECK (status IN
      ('open', 'sell_pending', 'sold', 'list_pending', 'listed', 'held', 'shipped', 'gone')),
    status_at      INTEGER NOT NULL
  );
  CREATE INDEX pulls_status ON pulls (status);
  CREATE INDEX pulls_card ON pulls (card_id);

  CREATE TABLE decisions (
    id             INTEGER PRIMARY KEY,
    pull_id        TEXT NOT NULL REFERENCES pulls (pull_id),
    action         TEXT NOT NULL CHECK (action IN ('sell_back', 'list', 'hold', 'reprice', 'delist')),
    reason         TEXT NOT NULL,
    price_cents    INTEGER,
    decided_at     INTEGER NOT NULL
  );
  CREATE INDEX decisions_pull ON decisions (pull_id);

  CREATE TABLE sellbacks (
    id             INTEGER PRIMARY KEY,
    pull_id        TEXT NOT NULL,
    card_id        TEXT NOT NULL,
    account        TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('sold', 'already_sold', 'failed')),
    payout_cents   INTEGER NOT NULL,
    payout_rate    REAL,
    transaction_id TEXT,
    error          TEXT,
    counted        INTEGER NOT NULL CHECK (counted IN (0, 1)),
    at             INTEGER NOT NULL
  );
  -- A pull pays out once: at most one counted sale per pull, enforced by the database itself.
  CREATE UNIQUE INDEX sellbacks_counted ON sellbacks (pull_id) WHERE counted = 1;
  CREATE INDEX sellbacks_at ON sellbacks (at);

  CREATE TABLE listings (
    listing_id     TEXT PRIMARY KEY,
    card_id        TEXT NOT NULL,
    pull_id        TEXT,
    account        TEXT NOT NULL,
    price_cents    INTEGER NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('active', 'delisted', 'filled')),
    created_at     INTEGER NOT NULL,
    repriced_at    INTEGER,
    delisted_at    INTEGER,
    filled_at      INTEGER,
    proceeds_cents INTEGER
  );
  CREATE INDEX listings_state ON listings (state);

  CREATE TABLE listing_events (
    id             INTEGER PRIMARY KEY,
    listing_id     TEXT NOT NULL REFERENCES listings (listing_id),
    event          TEXT NOT NULL CHECK (event IN ('created', 'repriced', 'delisted', 'filled')),
    price_cents    INTEGER,
    at             INTEGER NOT NULL
  );

  CREATE TABLE balances (
    id             INTEGER PRIMARY KEY,
    account        TEXT NOT NULL,
    balance_cents  INTEGER NOT NULL,
    source         TEXT NOT NULL,
    at             INTEGER NOT NULL
  );
  CREATE INDEX balances_account_at ON balances (account, at);
  `,
  // 2: orders in doubt are resolved by evidence. When each intent was first and last sent and last
  // answered (the window its pulls can carry), the unit price it was planned at, whether an attempt
  // may have reached the service, whether the service answered a re-send as if it did not know the
  // key, and how an intent was settled (`parked_at`: waiting for an operator). Per-account facts
  // learnt from the service (the purchase report's user id) live in `account_facts`.
  `
  ALTER TABLE intents ADD COLUMN first_sent_at INTEGER;
  ALTER TABLE intents ADD COLUMN last_sent_at INTEGER;
  ALTER TABLE intents ADD COLUMN last_answer_at INTEGER;
  ALTER TABLE intents ADD COLUMN unit_price_cents INTEGER;
  ALTER TABLE intents ADD COLUMN delivered INTEGER NOT NULL DEFAULT 0 CHECK (delivered IN (0, 1));
  ALTER TABLE intents ADD COLUMN key_forgotten INTEGER NOT NULL DEFAULT 0 CHECK (key_forgotten IN (0, 1));
  ALTER TABLE intents ADD COLUMN parked_at INTEGER;
  ALTER TABLE intents ADD COLUMN settled_by TEXT;
  UPDATE intents SET first_sent_at = created_at, last_sent_at = updated_at WHERE attempts > 0;
  UPDATE intents SET delivered = 1 WHERE state IN ('sent', 'in_doubt');

  CREATE TABLE account_facts (
    account        TEXT NOT NULL,
    fact           TEXT NOT NULL,
    value          TEXT NOT NULL,
    at             INTEGER NOT NULL,
    PRIMARY KEY (account, fact)
  );
  `,
  // 3: card purchases. A card order keeps the price, the buyer fee, where the card came from and
  // whether the service flagged the sale for review; the bought card is a holding like a pull (its
  // pull_id is the purchase's transaction_id, the id the service sells it back by), marked by its
  // origin and the price paid, so the sell side lists, holds or sells it back with its lock basis.
  `
  ALTER TABLE orders ADD COLUMN price_cents INTEGER;
  ALTER TABLE orders ADD COLUMN fee_cents INTEGER;
  ALTER TABLE orders ADD COLUMN source TEXT;
  ALTER TABLE orders ADD COLUMN needs_review INTEGER NOT NULL DEFAULT 0 CHECK (needs_review IN (0, 1));
  ALTER TABLE pulls ADD COLUMN origin TEXT NOT NULL DEFAULT 'pack' CHECK (origin IN ('pack', 'purchase'));
  ALTER TABLE pulls ADD COLUMN price_paid_cents INTEGER;
  CREATE INDEX orders_operation_created ON orders (account, operation, created_at);
  `,
  // 4: the model's promise per order (expected vs realized, src/store/model-store.ts). Written with
  // the intent, before the request leaves: the row the order was opened on (per pack: price, EV,
  // realized EV, its standard deviation, P(loss), and each part's mean and standard deviation) and
  // the strategy version it was decided by, kept whole once per digest.
  `
  CREATE TABLE model_strategies (
    digest         TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    strategy       TEXT NOT NULL,
    first_used_at  INTEGER NOT NULL
  );

  CREATE TABLE order_models (
    intent_key     TEXT PRIMARY KEY REFERENCES intents (key),
    account        TEXT NOT NULL,
    strategy_digest TEXT NOT NULL REFERENCES model_strategies (digest),
    category       TEXT NOT NULL,
    pack_type      TEXT NOT NULL,
    risk_level     TEXT NOT NULL,
    quantity       INTEGER NOT NULL,
    price_cents    INTEGER NOT NULL,
    ev_cents       INTEGER NOT NULL,
    realized_ev_cents INTEGER NOT NULL,
    sd_cents       INTEGER NOT NULL,
    p_loss         REAL NOT NULL,
    sell_back_mean_cents INTEGER NOT NULL,
    sell_back_sd_cents   INTEGER NOT NULL,
    listing_mean_cents   INTEGER NOT NULL,
    listing_sd_cents     INTEGER NOT NULL,
    held_mean_cents      INTEGER NOT NULL,
    held_sd_cents        INTEGER NOT NULL,
    decided_at     INTEGER NOT NULL
  );
  CREATE INDEX order_models_account ON order_models (account, decided_at);
  -- An order's pulls and a pull's listings are read for every order compared.
  CREATE INDEX pulls_checkout ON pulls (checkout_id);
  CREATE INDEX listings_pull ON listings (pull_id);
  `,
  // 5: the books follow the balance (src/store/books.ts). A sale's proceeds are what the balance
  // gained, attributed when a balance reading shows it (`credited_at`; null while a sale found in
  // the vault waits for its credit), with the fee the marketplace kept; every balance change the
  // ledger cannot attribute is an adjustment, with what of a credit is still free to attribute.
  // A payout or a charge keeps the last balance reading booked before it (`balance_seen`): it is
  // a flow after that reading and before the next, whatever their milliseconds say. A bought card
  // keeps the pull_id the service's vault shows for it when that is not its transaction id
  // (`sell_pull_id`: the spec does not show how a bought card is named for sell-back).
  // Sales booked before at the strategy's assumed fee stay as they were.
  `
  ALTER TABLE pulls ADD COLUMN sell_pull_id TEXT;
  ALTER TABLE sellbacks ADD COLUMN balance_seen INTEGER;
  ALTER TABLE orders ADD COLUMN balance_seen INTEGER;
  ALTER TABLE listings ADD COLUMN credited_at INTEGER;
  ALTER TABLE listings ADD COLUMN fee_cents INTEGER;
  UPDATE listings SET credited_at = filled_at, fee_cents = price_cents - proceeds_cents
    WHERE state = 'filled' AND proceeds_cents IS NOT NULL;
  CREATE TABLE adjustments (
    id             INTEGER PRIMARY KEY,
    account        TEXT NOT NULL,
    amount_cents   INTEGER NOT NULL,
    unattributed_cents INTEGER NOT NULL DEFAULT 0,
    reason         TEXT NOT NULL,
    source         TEXT NOT NULL,
    at             INTEGER NOT NULL
  );
  CREATE INDEX adjustments_account_at ON adjustments (account, at);
  `,
  // 6: no read on a running bot's path scans a table that grows for the life of the ledger
  // (test/store/query-plans.test.ts). What one account holds and lists (before every order, at
  // every sell pass and reconciliation) is read by account; whether an account's orders were
  // quiet since an answer was sent (every purchase answer), by account and time; a listing's
  // price events by listing (reports); the latest activity (the dashboard's stream) by time.
  `
  CREATE INDEX pulls_account_status ON pulls (account, status);
  CREATE INDEX listings_account_state ON listings (account, state);
  CREATE INDEX intents_account_state ON intents (account, state);
  CREATE INDEX intents_account_created ON intents (account, created_at);
  CREATE INDEX intents_account_updated ON intents (account, updated_at);
  CREATE INDEX intents_updated ON intents (updated_at);
  CREATE INDEX pulls_status_at ON pulls (status_at);
  CREATE INDEX listing_events_listing ON listing_events (listing_id);
  CREATE INDEX listing_events_at ON listing_events (at);
  CREATE INDEX balances_at ON balances (at);
  `,
  // 7: no read on a running bot's path searches one account's whole history either. The last
  // balance reading, which every order and every sale booked records, is one index entry. The flows
  // since a balance reading (every reading) seek the charges and payouts booked after it
  // (`balance_seen`, or by time for rows from before that column) and the proceeds credited
  // after it; the orders booked since the budget's last look (before every order) seek by rowid,
  // an account's orders of a period (evidence for an order in doubt) by time.
  `
  CREATE INDEX balances_account ON balances (account);
  CREATE INDEX orders_account ON orders (account);
  CREATE INDEX orders_account_created ON orders (account, created_at);
  CREATE INDEX orders_account_seen ON orders (account, balance_seen, created_at);
  CREATE INDEX sellbacks_account_seen ON sellbacks (account, balance_seen, at);
  DROP INDEX listings_account_state;
  CREATE INDEX listings_account_state ON listings (account, state, credited_at);
  `,
  // 8: the marked P&L (before every order) reads what an account owns by value, counted, from the
  // index alone: sealed packs are held for good, so the rows themselves grow with the ledger's age.
  // The index replaces (account, status), whose every search it serves.
  `
  DROP INDEX pulls_account_status;
  CREATE INDEX pulls_account_status ON pulls (account, status, kind, value_cents);
  `,
  // 9: an account's listing totals (the marked P&L's proceeds, before every order; the fee measured
  // so far, at every balance rise) kept as running sums by triggers, in the same transaction as the
  // write that changes them: every filled listing ever is summed once here, not at every read.
  `
  CREATE TABLE listing_totals (
    account         TEXT PRIMARY KEY,
    proceeds_cents  INTEGER NOT NULL,
    fee_cents       INTEGER NOT NULL,
    fee_price_cents INTEGER NOT NULL,
    fee_sales       INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO listing_totals (account, proceeds_cents, fee_cents, fee_price_cents, fee_sales)
    SELECT account, COALESCE(SUM(proceeds_cents), 0),
      COALESCE(SUM(CASE WHEN credited_at IS NOT NULL AND fee_cents IS NOT NULL THEN fee_cents END), 0),
      COALESCE(SUM(CASE WHEN credited_at IS NOT NULL AND fee_cents IS NOT NULL THEN price_cents END), 0),
      COUNT(CASE WHEN credited_at IS NOT NULL AND fee_cents IS NOT NULL THEN 1 END)
    FROM listings WHERE state = 'filled' GROUP BY account;
  CREATE TRIGGER listing_totals_insert AFTER INSERT ON listings WHEN NEW.state = 'filled'
  BEGIN ${totalsPart('NEW', '')} END;
  CREATE TRIGGER listing_totals_update
    AFTER UPDATE OF account, state, proceeds_cents, credited_at, fee_cents, price_cents ON listings
  BEGIN ${totalsPart('OLD', '-')} ${totalsPart('NEW', '')} END;
  CREATE TRIGGER listing_totals_delete AFTER DELETE ON listings WHEN OLD.state = 'filled'
  BEGIN ${totalsPart('OLD', '-')} END;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the database to SCHEMA_VERSION; refuses a database written by a newer packbot. */
export function migrate(db: Database): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `ledger schema version ${current} is newer than this packbot supports (${SCHEMA_VERSION}); upgrade packbot`,
    );
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    const sql = MIGRATIONS[v]!;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return SCHEMA_VERSION;
}
