/**
 * The files of src/, for the tests that guard how the sources are written (each spec path once,
 * the market's laws once, no ICU, one way to build an HTTP client, undici's Agent from one module):
 * they all walk this one list.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const SRC = join(import.meta.dirname, '..', 'src');

/** Every file of src/ ending in one of `extensions`, relative to src/ with forward slashes, sorted. */
export function srcFiles(extensions: readonly string[] = ['.ts']): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .map((f) => f.split('\\').join('/'))
    .filter((f) => extensions.some((e) => f.endsWith(e)))
    .sort();
}

/** A file of src/, by its path relative to src/. */
export const readSrc = (f: string): string => readFileSync(join(SRC, f), 'utf8');
