/**
 * src/api/undici-agent.ts loads undici's Agent by its module path, which is not a documented entry
 * point: it must be the class `undici` exports (an upgrade that moves it fails here), and it is
 * the only place src/ takes a value from undici.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as undici from 'undici';
import { expect, it } from 'vitest';
import { Agent } from '../../src/api/undici-agent.js';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

it('is the Agent class undici exports', () => {
  expect(Agent).toBe(undici.Agent);
  const agent = new Agent({ connections: 1 });
  expect(agent).toBeInstanceOf(undici.Dispatcher);
  return agent.close();
});

it('is the only place src/ loads undici code from', () => {
  const found: string[] = [];
  for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!/\.(ts|js)$/.test(f) || f === join('api', 'undici-agent.ts')) continue;
    readFileSync(join(src, f), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const value = /from '(undici[^']*)'/.test(line) && !/^\s*import type /.test(line);
        if (value || /require\(['"]undici/.test(line)) found.push(`src/${f}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(found, "import { Agent } from src/api/undici-agent.ts ('undici' for types only)").toEqual([]);
});
