/**
 * `packbot <command>`: dispatches to the command's file (`vault` and `listings` share holdings.ts),
 * loaded on demand. A user's mistake ends with a message and exit code 2, never a stack trace.
 */
import { UsageError, UserInputError } from '../core/errors.js';
import { textTable } from '../core/text-table.js';
import type { Command } from './command.js';

interface Entry {
  summary: string;
  load: () => Promise<Command>;
}

/**
 * Commands in the order `--help` lists them. Summaries live here so `--help` loads no command
 * module (and none of their dependencies); each command loads lazily when it runs.
 */
export const COMMANDS: Record<string, Entry> = {
  run: {
    summary: 'run the bot (default: embedded simulator)',
    load: async () => (await import('./run.js')).command,
  },
  sim: {
    summary: 'serve the simulated Partner API over HTTP',
    load: async () => (await import('./sim.js')).command,
  },
  score: { summary: 'score every pack x risk level', load: async () => (await import('./score.js')).command },
  snapshot: {
    summary: 'record pools, shop stock and account into a snapshot file',
    load: async () => (await import('./snapshot.js')).command,
  },
  record: {
    summary: 'record a snapshot every interval into a directory',
    load: async () => (await import('./record.js')).command,
  },
  calibrate: {
    summary: 'fit the world dynamics to a snapshot series and the purchase report',
    load: async () => (await import('./calibrate.js')).command,
  },
  backtest: {
    summary: 'Monte Carlo backtest of a strategy against a snapshot',
    load: async () => (await import('./backtest.js')).command,
  },
  optimize: {
    summary: 'search strategy parameters by backtest (a race on common random numbers, out-of-sample check)',
    load: async () => (await import('./optimize.js')).command,
  },
  merge: {
    summary: 'merge the parts of a sharded backtest into one report',
    load: async () => (await import('./merge.js')).command,
  },
  validate: {
    summary: 'validate config, strategy, world and snapshot files',
    load: async () => (await import('./validate.js')).command,
  },
  report: {
    summary: 'profit and loss from the ledger',
    load: async () => (await import('./report.js')).command,
  },
  orders: {
    summary: 'purchase orders in the ledger; settle an order in doubt',
    load: async () => (await import('./orders.js')).command,
  },
  status: {
    summary: 'balance, P&L, limits, pauses and orders in doubt of each account',
    load: async () => (await import('./status.js')).command,
  },
  doctor: {
    summary: 'check key, scopes, limits, clock, ledger, metrics and control',
    load: async () => (await import('./doctor.js')).command,
  },
  vault: {
    summary: "the account's vault beside the ledger's view of each card",
    load: async () => (await import('./holdings.js')).vault,
  },
  listings: {
    summary: "the account's listings: the API's beside the ledger's",
    load: async () => (await import('./holdings.js')).listings,
  },
  delist: {
    summary: 'take one listing or all off the market (the cards are held)',
    load: async () => (await import('./delist.js')).command,
  },
};

function help(): string {
  const lines = textTable(
    null,
    Object.entries(COMMANDS).map(([name, c]) => [name, c.summary]),
    { freeLast: true, trim: false },
  ).map((l) => `  ${l}`);
  return [
    'packbot: trading bot and strategy runner for the Partner Trading API',
    '',
    'Usage: packbot <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    "Run `packbot <command> --help` for a command's options.",
    'Exit codes: 0 ok, 1 runtime failure, 2 bad usage or invalid input.',
    '',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      process.stdout.write(help());
      return name === undefined ? 2 : 0;
    }
    if (name === '--version' || name === '-v') {
      process.stdout.write('packbot 0.1.0\n');
      return 0;
    }
    const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (!entry) throw new UsageError(`unknown command '${name}' (see packbot --help)`);
    const command = await entry.load();
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`${command.summary}\n\nUsage: ${command.usage}\n`);
      return 0;
    }
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UserInputError) {
      process.stderr.write(`packbot: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`packbot: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.PACKBOT_DEBUG) process.stderr.write(`${err instanceof Error ? err.stack : ''}\n`);
    return 1;
  }
}
