/**
 * Files a packbot that resolved `store.path` and `control.kill_switch_file` against the working
 * directory left where this config no longer points. Since those paths follow the config file's
 * directory (bot-config.ts, path rule), a config run from elsewhere than its own directory names
 * new places; a bot started there would open empty books beside the old ones (orders in doubt
 * forgotten, the vault's cards unknown) or trade while the old pause file says stop. So
 * `packbot run` refuses while the old file exists and the new one does not, naming both.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { BotConfigFile, configPathOf, dryRunStorePath, storePathOf } from './bot-config.js';
import { InputFileError, type InputIssue, readSource, validateSource } from './load.js';

/** The issues for a config already validated by `loadBotConfig`; undefined when nothing is left behind. */
export function pathsLeftBehind(
  configFile: string,
  mode: 'live' | 'dry-run',
  cwd: string = process.cwd(),
): InputFileError | undefined {
  const src = readSource(configFile);
  const raw = validateSource(src, BotConfigFile);
  const issues: InputIssue[] = [];
  const check = (at: string[], written: string, now: string, before: string, what: string) => {
    if (isAbsolute(written) || before === now || existsSync(now) || !existsSync(before)) return;
    const pos = src.locate(at);
    issues.push({
      file: configFile,
      line: pos?.line,
      column: pos?.column,
      path: at.join('.'),
      message:
        `no ${what} at ${now}, but one at ${before}: relative paths in a config are relative to ` +
        `the config file's directory, not the working directory; move it there or write its path absolute`,
    });
  };
  const store = raw.store.path;
  if (store !== ':memory:') {
    const old = resolve(cwd, store);
    const before = mode === 'dry-run' ? dryRunStorePath(old) : old;
    check(['store', 'path'], store, storePathOf(raw, configFile, mode), before, 'ledger');
  }
  const pause = raw.control.kill_switch_file;
  check(
    ['control', 'kill_switch_file'],
    pause,
    configPathOf(configFile, pause),
    resolve(cwd, pause),
    'kill switch file',
  );
  return issues.length > 0 ? new InputFileError(issues) : undefined;
}
