/**
 * `packbot status`: per account, balance, net P&L, today's packs and spend against the ceilings,
 * next purchase, pauses and orders in doubt. From the running bot's `/api/v1/status` when it
 * answers; otherwise from the ledger (what needs a live account read is left out).
 */
import { existsSync } from 'node:fs';
import { BudgetTracker } from '../bot/spending/budget-state.js';
import { accountStatusOf } from '../bot/views/account-status.js';
import { pauseInfo } from '../bot/views/read-model.js';
import { type BotConfig, loadBotConfig } from '../config/bot-config.js';
import { iso } from '../core/clock.js';
import { UsageError, UserInputError } from '../core/errors.js';
import { formatUsd, toCents } from '../core/money.js';
import { type AccountStatus, StatusResponse } from '../obs/api-schemas.js';
import { endpointPauseFile, KillSwitch } from '../obs/kill-switch.js';
import { Ledger } from '../store/ledger.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import { botGet, botUp, botUrl, table } from './ops.js';

const USAGE = `packbot status [--config F] [--json]

  From the running bot (metrics.host:metrics.port, /api/v1/status) when it answers, else from the
  ledger. --json: { source, url | ledger, status } with status as in schemas/api-status.schema.json`;

/** The status the ledger alone can give (the bot is not running). */
export function ledgerStatus(config: BotConfig, ledger: Ledger, wallNow = Date.now()): StatusResponse {
  const now = Math.max(wallNow, ledger.latestActivityAt());
  const ks = new KillSwitch(config.control.killSwitchFile, () => now, undefined, {
    stateFile: endpointPauseFile(config.store.path),
  }).status();
  const accounts = config.accounts.map(
    (a): AccountStatus =>
      accountStatusOf({
        ledger,
        name: a.name,
        strategy: a.strategy,
        now,
        killSwitch: ks,
        totals: new BudgetTracker(ledger, a.name, a.strategy).totals(now),
      }),
  );
  return { now: iso(now), mode: config.mode, embedded: config.api.embedded, pause: pauseInfo(ks), accounts };
}

const money = (v: number | null) => (v === null ? '-' : formatUsd(toCents(v)));

function renderStatus(s: StatusResponse, from: string): string {
  const rows = s.accounts.map((a) => [
    a.name,
    money(a.balance_usd),
    money(a.net_pnl_usd),
    a.packs.max_per_day === null ? String(a.packs.today) : `${a.packs.today}/${a.packs.max_per_day}`,
    `${money(a.spend.today_usd)} / ${money(a.spend.daily_cap_usd)}`,
    a.next_purchase_at ?? '-',
    a.pauses.map((p) => p.reason).join(', ') || 'none',
    String(a.orders_in_doubt),
    String(a.listings_active),
    String(a.holdings),
  ]);
  const head = [
    'account',
    'balance',
    'net P&L',
    'packs today',
    'spend today / cap',
    'next purchase',
    'pauses',
    'in doubt',
    'listed',
    'held',
  ];
  const lines = [
    `${from} (${s.mode}${s.embedded ? ', embedded simulator' : ''}), at ${s.now}`,
    '',
    table(head, rows),
  ];
  if (s.pause.paused)
    lines.push(
      '',
      `Opening packs is paused (${s.pause.reasons.join(', ')})${s.pause.by ? ` by ${s.pause.by}` : ''}${s.pause.note ? `: ${s.pause.note}` : ''}.`,
    );
  for (const a of s.accounts) if (a.waiting) lines.push(`${a.name}: ${a.waiting}`);
  return `${lines.join('\n')}\n`;
}

export const command: Command = {
  summary: 'balance, P&L, limits, pauses and orders in doubt of each account',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      { config: { type: 'string' }, json: { type: 'boolean' } },
      'status',
    );
    if (positionals.length > 0) throw new UsageError(`status: unexpected argument '${positionals[0]}'`);
    const config = loadBotConfig(values.config ?? 'config/bot.yaml', process.env, { ignoreEnv: true });
    let out: { source: 'bot' | 'ledger'; url?: string; ledger?: string; status: StatusResponse };
    if (await botUp(config)) {
      out = {
        source: 'bot',
        url: botUrl(config),
        status: StatusResponse.parse(await botGet(config, '/api/v1/status')),
      };
    } else {
      if (!existsSync(config.store.path))
        throw new UserInputError(
          `${config.file}: store.path: the bot is not running and there is no ledger at ${config.store.path} (has it run yet?)`,
        );
      const ledger = Ledger.open(config.store.path);
      try {
        out = { source: 'ledger', ledger: config.store.path, status: ledgerStatus(config, ledger) };
      } finally {
        ledger.close();
      }
    }
    process.stdout.write(
      values.json
        ? `${JSON.stringify(out, null, 2)}\n`
        : renderStatus(
            out.status,
            out.source === 'bot'
              ? `bot running at ${out.url}`
              : `bot not running; from the ledger ${out.ledger}`,
          ),
    );
    return 0;
  },
};
