/** Reading backtest inputs: a snapshot file, checked like every other input file. */
import { loadFile } from '../config/load.js';
import { SnapshotFile } from './snapshot-schema.js';

export function loadSnapshot(path: string): SnapshotFile {
  return loadFile(path, SnapshotFile);
}
