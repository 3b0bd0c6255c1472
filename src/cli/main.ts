/**
 * `packbot <command>`: dispatches to one file per command. A user's mistake ends with a message
 * and exit code 2, never a stack trace.
 */
import { UsageError, UserInputError } from './errors.js';

export interface Command {
  summary: string;
  usage: string;
  run(argv: string[]): Promise<number>;
}

type Loader = () => Promise<Command>;

const notYet =
  (summary: string, usage: string): Loader =>
  async () => ({
    summary,
    usage,
    run: async () => {
      process.stderr.write(`packbot: this command is not available yet\n`);
      return 1;
    },
  });

/** Commands in the order `--help` lists them. Each loads lazily so start-up stays fast. */
export const COMMANDS: Record<string, Loader> = {
  run: async () => (await import('./run.js')).command,
  sim: async () => (await import('./sim.js')).command,
  score: async () => (await import('./score.js')).command,
  snapshot: async () => (await import('./snapshot.js')).command,
  backtest: async () => (await import('./backtest.js')).command,
  validate: async () => (await import('./validate.js')).command,
  report: async () => (await import('./report.js')).command,
};

function help(loaded: Record<string, Command>): string {
  const width = Math.max(...Object.keys(loaded).map((n) => n.length));
  const lines = Object.entries(loaded).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
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
      const loaded: Record<string, Command> = {};
      for (const [n, load] of Object.entries(COMMANDS)) loaded[n] = await load();
      process.stdout.write(help(loaded));
      return name === undefined ? 2 : 0;
    }
    if (name === '--version' || name === '-v') {
      process.stdout.write('packbot 0.1.0\n');
      return 0;
    }
    const load = COMMANDS[name];
    if (!load) throw new UsageError(`unknown command '${name}' (see packbot --help)`);
    const command = await load();
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
