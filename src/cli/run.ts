/**
 * `packbot run [--config config/bot.yaml] [--dry-run]`: the long-running bot. Bad config is exit 2
 * with file:line:column; SIGTERM/SIGINT stop it gracefully (exit 0) within 10 seconds.
 */

import { Runner, type RunnerOptions } from '../bot/runner.js';
import type { CrashPoint } from '../bot/spending/executor.js';
import { loadBotConfig } from '../config/bot-config.js';
import { pathsLeftBehind } from '../config/paths-left-behind.js';
import { UsageError } from '../core/errors.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';

const CRASH_POINTS: readonly CrashPoint[] = ['after_intent', 'before_send', 'after_answer'];

/**
 * `PACKBOT_CHAOS_CRASH_AT=POINT:OPERATION:N` (the chaos suite only): the process SIGKILLs itself at
 * that crash point of its N-th intent of that operation (`pack` or `card`), instants no kill from
 * outside can aim at (an intent recorded but not yet sent). Unset or malformed: no hook.
 */
function chaosCrashHook(spec: string | undefined): RunnerOptions['crashAt'] {
  const m = /^(\w+):(pack|card):(\d+)$/.exec(spec ?? '');
  if (!m || !(CRASH_POINTS as readonly string[]).includes(m[1]!)) return undefined;
  const [point, operation, nth] = [m[1] as CrashPoint, m[2], Number(m[3])];
  let seen = 0;
  return (p: CrashPoint, _key: string, op?: string) => {
    if (p === point && op === operation && ++seen === nth) process.kill(process.pid, 'SIGKILL');
  };
}

/** Graceful stop budget; after it the process exits anyway (the ledger is crash-safe). */
const STOP_DEADLINE_MS = 9_500;

export const command: Command = {
  summary: 'run the bot (default: embedded simulator)',
  usage: `packbot run [--config config/bot.yaml] [--dry-run]

  --config F   bot configuration (default config/bot.yaml)
  --dry-run    read from the configured API, send every write to a local paper market

Stops gracefully on SIGTERM or SIGINT: no new orders, sell-backs still in their window are sent,
the ledger is closed. While the kill switch file exists, no pack is opened. SIGHUP re-reads the
strategies (kept unchanged if any is invalid). See docs/runner.md and docs/api.md.`,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      { config: { type: 'string' }, 'dry-run': { type: 'boolean' } },
      'run',
    );
    if (positionals.length > 0) throw new UsageError(`run: unexpected argument '${positionals[0]}'`);
    const configPath = values.config ?? 'config/bot.yaml';
    const config = loadBotConfig(configPath, process.env, { forceDryRun: values['dry-run'] === true });
    // A ledger or pause file where a packbot resolving against the working directory put them:
    // refuse rather than open empty books beside it (src/config/paths-left-behind.ts).
    const behind = pathsLeftBehind(configPath, config.mode);
    if (behind) throw behind;
    // Handlers go in before start-up, so a signal during start-up is a graceful stop too.
    let runner: Runner | undefined;
    let requested: NodeJS.Signals | undefined;
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) {
        process.stderr.write(`packbot: second ${signal}: exiting now\n`);
        process.exit(1);
      }
      requested = signal;
      // A real timer on purpose: this bounds the process's life, it is not business timing.
      setTimeout(() => {
        process.stderr.write('packbot: graceful stop took too long; exiting\n');
        process.exit(1);
      }, STOP_DEADLINE_MS).unref();
      if (runner) {
        runner.log.info({ signal }, 'signal received');
        void runner.stop(`signal ${signal}`);
      }
    };
    // SIGHUP: re-read and validate the strategies (the old ones stay on any error), as
    // POST /api/v1/control/reload does.
    const onHangup = () => {
      if (runner) void runner.control.reload({ by: 'SIGHUP', reason: 'signal' });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    process.on('SIGHUP', onHangup);
    try {
      const crashAt = chaosCrashHook(process.env.PACKBOT_CHAOS_CRASH_AT);
      runner = await Runner.start(config, crashAt ? { crashAt } : {});
      if (requested) void runner.stop(`signal ${requested} during start-up`);
      return await runner.done;
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.off('SIGHUP', onHangup);
    }
  },
};
