/** Strategy files (`packbot.strategy/v1`) from disk. */
import { type Strategy, StrategyFile } from '../strategy/strategy-schema.js';
import { loadFile } from './load.js';

/** Reads and validates a strategy file; bad input is an InputFileError (file:line:column). */
export function loadStrategy(path: string): Strategy {
  return loadFile(path, StrategyFile);
}
