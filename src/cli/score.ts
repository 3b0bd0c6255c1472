/**
 * `packbot score`: every pack × risk level of a snapshot (no network) or of the live API (read
 * politely, one request at a time), scored with a strategy. Table for people, `--json` for tools.
 */
import { join } from 'node:path';
import type { PartnerApi } from '../api/partner-api.js';
import { CATEGORIES, type Category, type PackPool } from '../api/schemas.js';
import { type ShopStock, SnapshotFile } from '../api/snapshot-schema.js';
import { readShop } from '../backtest/snapshot/snapshot.js';
import { repoRoot } from '../config/json-schemas.js';
import { loadFile } from '../config/load.js';
import { loadStrategy } from '../config/strategy-file.js';
import { UsageError } from '../core/errors.js';
import { toCents } from '../core/money.js';
import { scoreShop } from '../strategy/card-score.js';
import { type ScoreContext, type ScoreRow, scorePools } from '../strategy/score.js';
import type { Strategy } from '../strategy/strategy-schema.js';
import { parseFlags } from './args.js';
import { renderCardTable } from './card-table.js';
import type { Command } from './command.js';
import { renderScoreTable } from './score-table.js';

const USAGE = 'packbot score [--config F | --snapshot F] [--strategy F] [--category C] [--cards] [--json]';

const DEFAULT_STRATEGY = (): string => join(repoRoot(), 'strategies', 'balanced.yaml');

interface Inputs {
  pools: PackPool[];
  /** Shop stock per category: read with --cards, else the snapshot's (null when it has none). */
  shop: ShopStock[] | null;
  balanceCents: number | undefined;
  maxQuantity: Map<string, number>;
  /** `category/pack_type` → the pack list's price in cents; empty for a snapshot (pools only). */
  listPriceCents: Map<string, number>;
  strategyPath: string | undefined;
}

function fromSnapshot(file: string): Inputs {
  const snap = loadFile(file, SnapshotFile);
  return {
    pools: [...snap.pools],
    shop: snap.shop ?? null,
    balanceCents: snap.account ? toCents(snap.account.balance) : undefined,
    maxQuantity: new Map(),
    listPriceCents: new Map(),
    strategyPath: undefined,
  };
}

/** Reads packs and pools for the given categories, sequentially (reads are monitored, not free). */
async function readPools(
  api: PartnerApi,
  categories: readonly Category[],
): Promise<Omit<Inputs, 'strategyPath' | 'shop'>> {
  const account = await api.getAccount();
  const pools: PackPool[] = [];
  const maxQuantity = new Map<string, number>();
  const listPriceCents = new Map<string, number>();
  for (const category of categories) {
    const list = await api.listPacks({ category });
    for (const pack of list.packs) {
      maxQuantity.set(`${category}/${pack.pack_type}`, pack.max_quantity);
      listPriceCents.set(`${category}/${pack.pack_type}`, toCents(pack.price));
      for (const risk_level of pack.risk_levels)
        pools.push(await api.getPackPool({ pack_type: pack.pack_type, category, risk_level }));
    }
  }
  return { pools, balanceCents: toCents(account.balance), maxQuantity, listPriceCents };
}

/** Loads the bot config (no IO beyond the file) and the account whose key and strategy it names. */
async function loadConfigAccount(file: string) {
  const { loadBotConfig } = await import('../config/bot-config.js');
  const config = loadBotConfig(file);
  const account = config.accounts[0];
  if (!account) throw new UsageError(`${file}: no account configured`);
  return { config, account };
}

/**
 * Reads from the configured API. An embedded config reads the simulator as the bot left it (its
 * saved state, as `holdings` and `doctor` do), started for the duration: what the bot sees now.
 */
async function fromConfig(
  { config, account }: Awaited<ReturnType<typeof loadConfigAccount>>,
  categories: readonly Category[],
  shopCategories: readonly Category[] | null,
): Promise<Inputs> {
  const { openPartner } = await import('./ops.js');
  const partner = await openPartner(config, account);
  try {
    const shop = shopCategories ? await readShop(partner.api, shopCategories) : null;
    return { ...(await readPools(partner.api, categories)), shop, strategyPath: account.strategyPath };
  } finally {
    await partner.close();
  }
}

function parseCategory(value: string | undefined): Category | undefined {
  if (value === undefined) return undefined;
  if (!(CATEGORIES as readonly string[]).includes(value))
    throw new UsageError(`--category must be one of ${CATEGORIES.join(', ')}, got '${value}'`);
  return value as Category;
}

function scoreInputs(inputs: Inputs, strategy: Strategy, category: Category | undefined): ScoreRow[] {
  const pools = category ? inputs.pools.filter((p) => p.category === category) : inputs.pools;
  const ctx: ScoreContext = {
    maxQuantity: (c, p) => inputs.maxQuantity.get(`${c}/${p}`),
    listPriceCents: (c, p) => inputs.listPriceCents.get(`${c}/${p}`),
    onSkip: (pool, e) =>
      process.stderr.write(`packbot: skipped ${pool.category}/${pool.pack_type}: ${e.message}\n`),
  };
  if (inputs.balanceCents !== undefined) ctx.balanceCents = inputs.balanceCents;
  return scorePools(pools, strategy, ctx);
}

function printCards(
  inputs: Inputs,
  strategy: Strategy,
  category: Category | undefined,
  snapshot: string | undefined,
  json: boolean,
): number {
  if (inputs.shop === null)
    throw new UsageError(
      `${snapshot}: shop: this snapshot holds no shop stock (format v1, or recorded with --no-shop); record one with packbot snapshot`,
    );
  const shop = category ? inputs.shop.filter((s) => s.category === category) : inputs.shop;
  const rows = scoreShop(shop, strategy);
  if (json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else process.stdout.write(`strategy: ${strategy.name}   cards: ${rows.length}\n\n${renderCardTable(rows)}`);
  return 0;
}

export const command: Command = {
  summary: 'score every pack x risk level',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        config: { type: 'string' },
        snapshot: { type: 'string' },
        strategy: { type: 'string' },
        category: { type: 'string' },
        cards: { type: 'boolean' },
        json: { type: 'boolean' },
      },
      'score',
    );
    if (positionals.length > 0)
      throw new UsageError(`score: unexpected argument '${positionals[0]}' (${USAGE})`);
    if (values.config && values.snapshot)
      throw new UsageError('score: give --config or --snapshot, not both');
    if (!values.config && !values.snapshot)
      throw new UsageError(`score: give --snapshot F or --config F (${USAGE})`);
    const category = parseCategory(values.category);
    // Every file is validated before any network read: bad input never costs a request.
    let strategy: Strategy;
    let inputs: Inputs;
    if (values.snapshot) {
      inputs = fromSnapshot(values.snapshot);
      strategy = loadStrategy(values.strategy ?? DEFAULT_STRATEGY());
    } else {
      const target = await loadConfigAccount(values.config!);
      strategy = loadStrategy(values.strategy ?? target.account.strategyPath);
      const shopCategories = category ? [category] : strategy.cards.categories;
      inputs = await fromConfig(
        target,
        category ? [category] : strategy.packs.categories,
        values.cards ? shopCategories : null,
      );
    }
    if (values.cards) return printCards(inputs, strategy, category, values.snapshot, values.json === true);
    const rows = scoreInputs(inputs, strategy, category);
    if (values.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    else {
      process.stdout.write(`strategy: ${strategy.name}`);
      if (inputs.balanceCents !== undefined)
        process.stdout.write(`   balance: ${(inputs.balanceCents / 100).toFixed(2)} USD`);
      process.stdout.write(`\n\n${renderScoreTable(rows)}`);
    }
    return 0;
  },
};
