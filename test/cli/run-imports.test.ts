/**
 * What `packbot run` loads: its static import graph (the built CLI, as users run it) holds none of
 * the other commands' code (backtest, optimize, calibrate, report, record, snapshot), not the
 * simulator (loaded only in embedded mode and dry-run), not pino-pretty (only for a terminal), and
 * of undici only its Agent.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/helpers.js';
import { built } from '../e2e/process.js';

const dir = mkdtempSync(join(tmpdir(), 'packbot-imports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every module (ESM by loader hook, CJS by require.cache) loaded by importing `entry`. */
function loadedBy(entry: string): string[] {
  writeFileSync(
    join(dir, 'hook.mjs'),
    `let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) { port.postMessage(url); return next(url, context); }
`,
  );
  writeFileSync(
    join(dir, 'list.mjs'),
    `import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const urls = [];
port1.on('message', (u) => urls.push(u));
register('./hook.mjs', import.meta.url, { data: { port: port2 }, transferList: [port2] });
await import(${JSON.stringify(pathToFileURL(entry).href)});
await new Promise((r) => setTimeout(r, 200));
port1.close();
const cjs = Object.keys(createRequire(import.meta.url).cache);
process.stdout.write(JSON.stringify([...urls, ...cjs]));
`,
  );
  const r = spawnSync(process.execPath, [join(dir, 'list.mjs')], { encoding: 'utf8', cwd: ROOT });
  if (r.status !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as string[]).map((u) => u.replaceAll('\\', '/'));
}

describe.skipIf(!built())('packbot run: what it loads', () => {
  it('loads no other command, no simulator, and no pino-pretty', () => {
    const mods = loadedBy(join(ROOT, 'dist/src/cli/run.js'));
    const ours = mods.filter((m) => m.includes('/dist/src/'));
    expect(ours.some((m) => m.endsWith('/dist/src/bot/runner.js'))).toBe(true);
    expect(ours.filter((m) => m.includes('/dist/src/backtest/'))).toEqual([]);
    expect(ours.filter((m) => /\/dist\/src\/cli\/(?!run\.js|args\.js)/.test(m))).toEqual([]);
    // The world's schema (with its server choices) is the config's (embedded mode is validated at
    // start); the market is not.
    const schema = (m: string) => m.endsWith('/world-schema.js') || m.endsWith('/server-choices.js');
    expect(ours.filter((m) => m.includes('/dist/src/market/') && !schema(m))).toEqual([]);
    expect(ours.filter((m) => /\/dist\/src\/bot\/(embedded|paper-market)/.test(m))).toEqual([]);
    expect(mods.filter((m) => m.includes('/node_modules/pino-pretty/'))).toEqual([]);
    // undici's Agent alone (src/api/undici-agent.ts), not the package's index and its fetch.
    expect(mods.some((m) => m.endsWith('/node_modules/undici/lib/dispatcher/agent.js'))).toBe(true);
    expect(mods.filter((m) => /\/node_modules\/undici\/(index\.js|lib\/web\/)/.test(m))).toEqual([]);
  });
});
