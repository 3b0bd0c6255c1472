/**
 * src/api/undici-agent.ts loads undici's Agent by its module path, which is not a documented entry
 * point: it must be the class `undici` exports (an upgrade that moves it fails here), and it is
 * the only place src/ takes a value from undici.
 */
import * as undici from 'undici';
import { expect, it } from 'vitest';
import { Agent } from '../../src/api/undici-agent.js';
import { readSrc, srcFiles } from '../src-files.js';

it('is the Agent class undici exports', () => {
  expect(Agent).toBe(undici.Agent);
  const agent = new Agent({ connections: 1 });
  expect(agent).toBeInstanceOf(undici.Dispatcher);
  return agent.close();
});

it('is the only place src/ loads undici code from', () => {
  const found: string[] = [];
  for (const f of srcFiles(['.ts', '.js'])) {
    if (f === 'api/undici-agent.ts') continue;
    readSrc(f)
      .split('\n')
      .forEach((line, i) => {
        const value = /from '(undici[^']*)'/.test(line) && !/^\s*import type /.test(line);
        if (value || /require\(['"]undici/.test(line)) found.push(`src/${f}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(found, "import { Agent } from src/api/undici-agent.ts ('undici' for types only)").toEqual([]);
});
