/**
 * `packbot orders`: the purchase orders in the ledger (newest first), `--in-doubt` for those in
 * doubt (parked ones first), each as the read API shows it (src/bot/views/order-view.ts), and
 * `packbot orders settle KEY --charged|--not-charged` for an operator to settle one the evidence
 * could not. Settling needs the bot stopped (one writer).
 */
import { ordersOf } from '../bot/views/order-view.js';
import { BotConfigFile } from '../config/bot-config.js';
import { loadFile } from '../config/load.js';
import { UsageError, UserInputError } from '../core/errors.js';
import { formatUsd, toCents } from '../core/money.js';
import { textTable } from '../core/text-table.js';
import type { OrderView } from '../obs/api-schemas.js';
import { Ledger } from '../store/ledger.js';
import { chargeAtBound, isUnsettled } from '../store/order-facts.js';
import { acquireWriterLock } from '../store/writer-lock.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import { ledgerPathOf } from './ledger-of.js';

const USAGE = `packbot orders [--config F] [--in-doubt] [--json] [--dry-run]
packbot orders settle KEY (--charged | --not-charged) [--note TEXT] [--config F] [--dry-run]

  --in-doubt     only orders in doubt (sent, no clear answer yet), parked ones first: a parked
                 order blocks new orders of its account
  --json         { in_doubt, orders } as GET /api/v1/orders gives it (schemas/api-orders.schema.json):
                 a pack order's pack_type and quantity, a card order's card_id and card_name;
                 charged_usd (null until settled), a card's price_usd and fee_usd, and bound_usd
                 (max_price + fee, or the planned price × packs) with amount_is_bound true while
                 the amount is only that bound
  settle KEY     settle an order in doubt by hand, with the bot stopped:
                 --charged books it at its bound (the reconciler adopts a pack order's pulls from
                 the vault); --not-charged closes it (its key is never sent again)
  --dry-run      the paper ledger of \`packbot run --dry-run\`

  The table's "charged" column shows a bound as "<= $X": the most the order can have cost.`;

/** What was ordered: `2 × starter`, or `card c-1 (Pikachu)`. */
function whatOf(r: OrderView): string {
  if (r.operation === 'card') return `card ${r.card_id ?? '?'}${r.card_name ? ` (${r.card_name})` : ''}`;
  return `${r.quantity} × ${r.pack_type ?? '?'}`;
}

/** The service's charge once known; a bound marked as one (`<=`) until then. */
function chargedOf(r: OrderView): string {
  const amount = r.charged_usd ?? r.bound_usd;
  return r.amount_is_bound ? `<= ${formatUsd(toCents(amount))}` : formatUsd(toCents(amount));
}

function renderOrders(rows: readonly OrderView[], inDoubt: boolean): string {
  if (rows.length === 0) return inDoubt ? 'No order in doubt.\n' : 'No orders.\n';
  const head = ['key', 'account', 'state', 'order', 'charged', 'first sent', 'tries', 'why'];
  const body = rows.map((r) => [
    r.key,
    r.account,
    r.state,
    whatOf(r),
    chargedOf(r),
    r.first_sent_at ?? '-',
    String(r.attempts),
    r.settled_by ?? [r.error_code, r.error_message].filter(Boolean).join(': '),
  ]);
  const out = textTable(head, body, { rule: true });
  if (rows.some((r) => r.state === 'parked'))
    out.push(
      '',
      'Parked orders block new orders of their account: packbot orders settle KEY --charged|--not-charged',
    );
  return `${out.join('\n')}\n`;
}

function settle(ledger: Ledger, key: string, charged: boolean, note: string | undefined): string {
  const intent = ledger.getIntent(key);
  if (!intent) throw new UserInputError(`orders settle: no order with key ${key} in ${ledger.path}`);
  if (!isUnsettled(intent))
    throw new UserInputError(`orders settle: ${key} is already ${intent.state}; nothing to settle`);
  const by = `operator${note ? `: ${note}` : ''}`;
  if (!charged) {
    ledger.failIntent(key, 'SETTLED_NOT_CHARGED', note ?? 'settled by an operator', undefined, by);
    return `${key}: settled as not charged; its key is never sent again.\n`;
  }
  // No answer says what it cost: booked at its bound, as evidence books one (order-facts.ts).
  const { order } = ledger.confirmBySettlement(key, { ...chargeAtBound(intent), pulls: [], by });
  return `${key}: settled as charged (${formatUsd(order.totalChargedCents)}, its bound); the bot adopts its pulls from the vault at its next reconciliation.\n`;
}

export const command: Command = {
  summary: 'purchase orders in the ledger; settle an order in doubt',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        config: { type: 'string' },
        'in-doubt': { type: 'boolean' },
        json: { type: 'boolean' },
        charged: { type: 'boolean' },
        'not-charged': { type: 'boolean' },
        note: { type: 'string' },
        'dry-run': { type: 'boolean' },
      },
      'orders',
    );
    const configPath = values.config ?? 'config/bot.yaml';
    const dryRun = values['dry-run'] === true;
    const [verb, key, ...extra] = positionals;
    if (verb !== undefined && verb !== 'settle')
      throw new UsageError(`orders: unknown action '${verb}' (settle)`);
    if (verb === 'settle') {
      if (key === undefined || extra.length > 0) throw new UsageError('orders settle: give exactly one KEY');
      if (values.charged === values['not-charged'])
        throw new UsageError('orders settle: give exactly one of --charged or --not-charged');
      // A write: the bot must not be running on this ledger (one writer; the lock says who holds it).
      const path = ledgerPathOf(loadFile(configPath, BotConfigFile), configPath, dryRun);
      const lock = acquireWriterLock(path);
      const ledger = Ledger.open(path);
      try {
        process.stdout.write(settle(ledger, key, values.charged === true, values.note));
        return 0;
      } finally {
        ledger.close();
        lock.release();
      }
    }
    if (values.charged || values['not-charged'] || values.note !== undefined)
      throw new UsageError('orders: --charged, --not-charged and --note go with settle KEY');
    const ledger = Ledger.open(ledgerPathOf(loadFile(configPath, BotConfigFile), configPath, dryRun));
    try {
      // The ledger alone: no request of a running bot is seen on the wire (order-facts.ts).
      const inDoubt = values['in-doubt'] === true;
      const read = ordersOf(ledger, { inDoubt, limit: 1000 });
      process.stdout.write(
        values.json ? `${JSON.stringify(read, null, 2)}\n` : renderOrders(read.orders, inDoubt),
      );
      return 0;
    } finally {
      ledger.close();
    }
  },
};
