/**
 * The ledger a command reads for a config: the live books, or with `--dry-run` the paper ones
 * (`packbot run --dry-run` keeps them apart). Needs only the config's `store.path`, resolved
 * against the config file's directory as `packbot run` resolves it (`storePathOf`), so the books
 * are found from any working directory.
 */
import { existsSync } from 'node:fs';
import { type BotConfigFile, storePathOf } from '../config/bot-config.js';
import { UserInputError } from '../core/errors.js';

export function ledgerPathOf(file: BotConfigFile, configPath: string, dryRun: boolean): string {
  const storePath = storePathOf(file, configPath, dryRun ? 'dry-run' : 'live');
  if (storePath === ':memory:' || !existsSync(storePath)) {
    const paper = storePathOf(file, configPath, 'dry-run');
    const hint = !dryRun && existsSync(paper) ? `; paper trades are in ${paper}: add --dry-run` : '';
    throw new UserInputError(
      `${configPath}: store.path: no ledger at ${storePath} (has the bot run yet?)${hint}`,
    );
  }
  return storePath;
}
