/**
 * `packbot orders`: the purchase intents in the ledger (newest first), `--in-doubt` for those whose
 * outcome is unknown (parked ones first), and `packbot orders settle KEY --charged|--not-charged` for
 * an operator to settle one the evidence could not. Settling needs the bot stopped (one writer).
 */
import { BotConfigFile } from '../config/bot-config.js';
import { loadFile } from '../config/load.js';
import { iso } from '../core/clock.js';
import { UsageError, UserInputError } from '../core/errors.js';
import { formatUsd, toCents, toUsd } from '../core/money.js';
import { textTable } from '../core/text-table.js';
import { type Intent, Ledger } from '../store/ledger.js';
import { acquireWriterLock } from '../store/writer-lock.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import { ledgerPathOf } from './ledger-of.js';

const USAGE = `packbot orders [--config F] [--in-doubt] [--json] [--dry-run]
packbot orders settle KEY (--charged | --not-charged) [--note TEXT] [--config F] [--dry-run]

  --in-doubt     only orders whose outcome is unknown (parked ones block new orders of their account)
  settle KEY     settle an order in doubt by hand, with the bot stopped:
                 --charged books it at its planned price (the reconciler adopts its pulls from the
                 vault); --not-charged closes it (its key is never sent again)
  --dry-run      the paper ledger of \`packbot run --dry-run\``;

export interface OrderView {
  key: string;
  account: string;
  state: 'pending' | 'sent' | 'in_doubt' | 'parked' | 'confirmed' | 'failed';
  pack_type: string | null;
  category: string | null;
  quantity: number | null;
  unit_price_usd: number | null;
  first_sent_at: string | null;
  attempts: number;
  key_forgotten: boolean;
  error_code: string | null;
  error: string | null;
  settled_by: string | null;
}

export function orderView(i: Intent): OrderView {
  const b = i.body;
  return {
    key: i.key,
    account: i.account,
    state: i.state === 'in_doubt' && i.parkedAt !== null ? 'parked' : i.state,
    pack_type: typeof b.pack_type === 'string' ? b.pack_type : null,
    category: typeof b.category === 'string' ? b.category : null,
    quantity: typeof b.quantity === 'number' ? b.quantity : null,
    unit_price_usd: i.unitPriceCents === null ? null : toUsd(i.unitPriceCents),
    first_sent_at: i.firstSentAt === null ? null : iso(i.firstSentAt),
    attempts: i.attempts,
    key_forgotten: i.keyForgotten,
    error_code: i.errorCode,
    error: i.errorMessage,
    settled_by: i.settledBy,
  };
}

export function renderOrders(rows: readonly OrderView[], inDoubt: boolean): string {
  if (rows.length === 0) return inDoubt ? 'No order in doubt.\n' : 'No orders.\n';
  const head = ['key', 'account', 'state', 'pack', 'qty', 'price', 'first sent', 'tries', 'why'];
  const body = rows.map((r) => [
    r.key,
    r.account,
    r.state,
    r.pack_type ?? '-',
    r.quantity === null ? '-' : String(r.quantity),
    r.unit_price_usd === null ? '-' : formatUsd(toCents(r.unit_price_usd)),
    r.first_sent_at ?? '-',
    String(r.attempts),
    r.settled_by ?? [r.error_code, r.error].filter(Boolean).join(': '),
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
  if (intent.state === 'confirmed' || intent.state === 'failed')
    throw new UserInputError(`orders settle: ${key} is already ${intent.state}; nothing to settle`);
  const by = `operator${note ? `: ${note}` : ''}`;
  if (!charged) {
    ledger.failIntent(key, 'SETTLED_NOT_CHARGED', note ?? 'settled by an operator', undefined, by);
    return `${key}: settled as not charged; its key is never sent again.\n`;
  }
  const quantity = typeof intent.body.quantity === 'number' ? intent.body.quantity : 1;
  const { order } = ledger.confirmBySettlement(key, {
    quantity,
    totalChargedCents: (intent.unitPriceCents ?? 0) * quantity,
    pulls: [],
    by,
  });
  return `${key}: settled as charged (${formatUsd(order.totalChargedCents)}); the bot adopts its pulls from the vault at its next reconciliation.\n`;
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
      const inDoubt = values['in-doubt'] === true;
      const intents = inDoubt
        ? ledger
            .unresolvedIntents()
            .sort(
              (a, b) =>
                Number(b.parkedAt !== null) - Number(a.parkedAt !== null) || a.createdAt - b.createdAt,
            )
        : ledger.recentIntents();
      const rows = intents.map(orderView);
      process.stdout.write(
        values.json ? `${JSON.stringify({ orders: rows }, null, 2)}\n` : renderOrders(rows, inDoubt),
      );
      return 0;
    } finally {
      ledger.close();
    }
  },
};
