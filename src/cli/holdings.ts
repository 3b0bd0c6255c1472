/**
 * `packbot vault` and `packbot listings`: what the account holds and lists according to the API
 * (the key's vault), beside the ledger's view of each card, so a difference shows at a glance.
 * Read-only: works while the bot runs (the ledger is read, never locked).
 */
import { existsSync } from 'node:fs';
import type { VaultEntry } from '../api/schemas.js';
import { type AccountConfig, type BotConfig, loadBotConfig } from '../config/bot-config.js';
import { UsageError } from '../core/errors.js';
import { formatUsd, toCents, toUsd } from '../core/money.js';
import { type DecisionRow, Ledger, type ListingRow, type PullRow } from '../store/ledger.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import { openPartner, table, wholeVault } from './ops.js';

export interface CardView {
  account: string;
  card_id: string;
  name: string;
  /** In the vault the key reads. */
  in_vault: boolean;
  value_usd: number | null;
  /** The vault says it is listed. */
  api_listed: boolean;
  buyback_usd: number | null;
  /** The ledger's pull status (open, sell_pending, listed, held, …), null when the ledger has no such card. */
  ledger_status: string | null;
  ledger_decision: string | null;
  /** The ledger's active listing price. */
  ledger_listing_usd: number | null;
  /**
   * The ledger and the API agree (held ⇔ in the vault, listed ⇔ listed). A sealed pack the vault
   * does not show agrees: the spec does not promise sealed packs in the vault, and a service may
   * leave them out (docs/simulator.md, `vault_sealed_packs`); one it shows compares as a card.
   */
  agree: boolean;
  /** Why `agree` holds without a comparison; null when the two were compared. */
  note: string | null;
}

export const SEALED_NOT_SHOWN = 'sealed pack: this service leaves sealed packs out of the vault';

/** One card as the vault (`entry`) and the ledger (`pull`, its active listing and last decision) see it. */
export function cardView(
  account: string,
  entry: VaultEntry | undefined,
  pull: PullRow | undefined,
  listing: ListingRow | undefined,
  decision: DecisionRow | undefined,
): CardView {
  const ledgerListed = listing !== undefined;
  const sealedNotShown = entry === undefined && pull?.kind === 'sealed_pack';
  return {
    account,
    card_id: entry?.card_id ?? pull!.cardId,
    name: entry?.item.name ?? pull!.name,
    in_vault: entry !== undefined,
    value_usd: entry ? entry.value : pull ? toUsd(pull.valueCents) : null,
    api_listed: entry?.listed ?? false,
    buyback_usd: entry?.buyback?.amount ?? null,
    ledger_status: pull?.status ?? null,
    ledger_decision: decision ? `${decision.action}: ${decision.reason}` : null,
    ledger_listing_usd: listing ? toUsd(listing.priceCents) : null,
    agree:
      sealedNotShown ||
      (entry !== undefined && pull !== undefined && (entry.listed ?? false) === ledgerListed),
    note: sealedNotShown ? SEALED_NOT_SHOWN : null,
  };
}

/** cardView with the pull's active listing and last decision read from the ledger. */
function cardFrom(
  account: string,
  entry: VaultEntry | undefined,
  pull: PullRow | undefined,
  ledger: Ledger | undefined,
): CardView {
  const listing = pull && ledger ? ledger.activeListingForCard(pull.cardId) : undefined;
  const decision = pull && ledger ? ledger.decisionsFor(pull.pullId).at(-1) : undefined;
  return cardView(account, entry, pull, listing, decision);
}

async function collect(
  config: BotConfig,
  listedOnly: boolean,
): Promise<{ sources: string[]; cards: CardView[] }> {
  const ledger = existsSync(config.store.path)
    ? Ledger.open(config.store.path, { readonly: true })
    : undefined;
  const cards: CardView[] = [];
  const sources: string[] = [];
  try {
    for (const account of config.accounts) {
      const vault = await readAccountVault(config, account, sources);
      const owned = new Map((ledger?.holdings(account.name) ?? []).map((p) => [p.cardId, p]));
      for (const [id, entry] of vault) cards.push(cardFrom(account.name, entry, owned.get(id), ledger));
      for (const [id, pull] of owned)
        if (!vault.has(id)) cards.push(cardFrom(account.name, undefined, pull, ledger));
    }
  } finally {
    ledger?.close();
  }
  return {
    sources,
    cards: listedOnly ? cards.filter((c) => c.api_listed || c.ledger_listing_usd !== null) : cards,
  };
}

async function readAccountVault(config: BotConfig, account: AccountConfig, sources: string[]) {
  const partner = await openPartner(config, account);
  try {
    sources.push(`${account.name}: ${partner.source}`);
    return await wholeVault(partner.api);
  } finally {
    await partner.close();
  }
}

const usd = (v: number | null) => (v === null ? '-' : formatUsd(toCents(v)));

function render(cards: readonly CardView[], sources: string[], listedOnly: boolean): string {
  const head = listedOnly
    ? ['account', 'card', 'name', 'value', 'API listed', 'ledger listing', 'ledger status', 'agree']
    : [
        'account',
        'card',
        'name',
        'value',
        'in vault',
        'API listed',
        'buyback',
        'ledger status',
        'ledger decision',
        'agree',
      ];
  const rows = cards.map((c) =>
    listedOnly
      ? [
          c.account,
          c.card_id,
          c.name,
          usd(c.value_usd),
          c.api_listed ? 'yes' : 'no',
          usd(c.ledger_listing_usd),
          c.ledger_status ?? '-',
          agreeCell(c),
        ]
      : [
          c.account,
          c.card_id,
          c.name,
          usd(c.value_usd),
          c.in_vault ? 'yes' : 'no',
          c.api_listed ? 'yes' : 'no',
          usd(c.buyback_usd),
          c.ledger_status ?? '-',
          (c.ledger_decision ?? '-').slice(0, 40),
          agreeCell(c),
        ],
  );
  const differ = cards.filter((c) => !c.agree).length;
  const what = listedOnly ? 'listings' : 'cards';
  const noted = cards.some((c) => c.note !== null) ? `\n* ${SEALED_NOT_SHOWN}.` : '';
  return `${sources.join('\n')}\n\n${cards.length === 0 ? `No ${what}.` : table(head, rows)}\n\n${cards.length} ${what}; ${differ === 0 ? 'the ledger and the API agree' : `${differ} where the ledger and the API differ (NO)`}.${noted}\n`;
}

const agreeCell = (c: CardView) => (c.agree ? (c.note ? 'yes*' : 'yes') : 'NO');

function holdingsCommand(listedOnly: boolean): Command {
  const name = listedOnly ? 'listings' : 'vault';
  return {
    summary: listedOnly
      ? "the account's listings: the API's beside the ledger's"
      : "the account's vault beside the ledger's view of each card",
    usage: `packbot ${name} [--config F] [--json]

  Reads the vault with each account's key (embedded mode: the bot's saved simulator state) and the
  ledger (read-only; works while the bot runs). 'agree' is no where they differ; a sealed pack
  the vault leaves out agrees (yes*: the spec does not promise sealed packs in the vault).`,
    async run(argv) {
      const { values, positionals } = parseFlags(
        argv,
        { config: { type: 'string' }, json: { type: 'boolean' } },
        name,
      );
      if (positionals.length > 0) throw new UsageError(`${name}: unexpected argument '${positionals[0]}'`);
      const config = loadBotConfig(values.config ?? 'config/bot.yaml', process.env);
      const { sources, cards } = await collect(config, listedOnly);
      process.stdout.write(
        values.json
          ? `${JSON.stringify({ sources, [listedOnly ? 'listings' : 'cards']: cards }, null, 2)}\n`
          : render(cards, sources, listedOnly),
      );
      return 0;
    },
  };
}

export const vault = holdingsCommand(false);
export const listings = holdingsCommand(true);
