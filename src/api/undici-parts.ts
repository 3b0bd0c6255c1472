/**
 * The two parts of undici the program uses, its Agent and its fetch, loaded without the rest of
 * the package: `import 'undici'` loads every part (mock agents, caches, WebSocket, EventSource…),
 * ~13 MB of a bot's resident memory. The deep paths are not a published API: if an undici release
 * moves them, the package's index is loaded instead (the same classes, only heavier).
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

function load(): { Agent: typeof Undici.Agent; fetch: typeof Undici.fetch } {
  try {
    const agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
    const { fetch } = require('undici/lib/web/fetch/index.js') as { fetch: typeof Undici.fetch };
    if (typeof agent === 'function' && typeof fetch === 'function') return { Agent: agent, fetch };
  } catch {
    // moved: the index below
  }
  const whole = require('undici') as typeof Undici;
  return { Agent: whole.Agent, fetch: whole.fetch };
}

const parts = load();
export const Agent = parts.Agent;
export type Agent = Undici.Agent;
export const fetch = parts.fetch;

/**
 * Node's own global `fetch`, while it is still the global one. Called, it loads Node's bundled
 * copy of undici (~10 MB resident) beside the undici package already loaded for its Agent; so
 * while `globalThis.fetch` is Node's, the package's `fetch` is called instead (the same code, one
 * copy). A `fetch` put in its place (nock in tests, an instrumenting wrapper) is called
 * as it is.
 */
const NODE_FETCH = /\bfetchImpl\b|lazyUndici/.test(Function.prototype.toString.call(globalThis.fetch))
  ? globalThis.fetch
  : undefined;

export function fetchToCall(): typeof globalThis.fetch {
  return globalThis.fetch === NODE_FETCH ? (fetch as unknown as typeof globalThis.fetch) : globalThis.fetch;
}
