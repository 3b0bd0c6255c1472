/**
 * undici's `Agent`, loaded alone: `import { Agent } from 'undici'` loads the whole package (its
 * fetch, WebSocket, cache, mock and proxy modules, ~1.1 MB of source), and `packbot run` needs the
 * Agent only: the client calls Node's global `fetch` with it as dispatcher. Loading the one module
 * keeps ~3 MiB off the bot's resident set (docs/runner.md, "Footprint").
 *
 * undici has no `exports` map, so the path resolves; it is not a documented entry point, so
 * test/api/undici-agent.test.ts checks that it is the very class `undici` exports: an upgrade that
 * moves it fails there, not in a running bot. Every Agent in src/ comes from here.
 */
import { createRequire } from 'node:module';
import type { Agent as UndiciAgent } from 'undici';

const require = createRequire(import.meta.url);

export const Agent: typeof UndiciAgent = require('undici/lib/dispatcher/agent.js');
export type Agent = UndiciAgent;
