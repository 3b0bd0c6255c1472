/** The package's root directory (where package.json is), found from here: works from src/ and dist/. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the config module');
    dir = up;
  }
}

/**
 * A worker thread's compiled script, `dist/src/<segments>` (workers cannot run TypeScript sources);
 * `what` names it in the error when the package has not been built.
 */
export function builtWorkerScript(what: string, ...segments: string[]): string {
  const path = join(packageRoot(), 'dist', 'src', ...segments);
  if (!existsSync(path)) throw new Error(`${what} worker not built: ${path} is missing (run npm run build)`);
  return path;
}
