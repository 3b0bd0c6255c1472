/**
 * Reading a snapshot file. Recorded snapshots are megabytes of JSON: they are parsed with
 * JSON.parse and validated first; only a file that fails goes through the positioned YAML loader,
 * so every error still names file:line:column and the field.
 */
import { readFileSync } from 'node:fs';
import { SnapshotFile } from '../../api/snapshot-schema.js';
import { loadFile } from '../../config/load.js';

export function loadSnapshot(path: string): SnapshotFile {
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return loadFile(path, SnapshotFile); // reports the missing or unreadable file
  }
  try {
    const parsed = SnapshotFile.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON (e.g. a hand-written YAML snapshot) or malformed: the loader explains where
  }
  return loadFile(path, SnapshotFile);
}
