/**
 * The operations table against the vendored spec (each endpoint's method, path and scope), and the
 * rule that each spec path is written once in src/: in the table.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS, OPERATIONS, type Operation } from '../../src/api/operations.js';
import { readSrc, srcFiles } from '../src-files.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const spec = readFileSync(join(root, 'docs/spec/partner-api.md'), 'utf8');

/** `METHOD /path` → the scope the spec names under its heading (null: "No scope needed"). */
function specEndpoints(): Map<string, string | null> {
  const out = new Map<string, string | null>();
  const lines = spec.split('\n');
  lines.forEach((line, i) => {
    const m = /^### .*: `(GET|POST|DELETE) (\/\S+)`$/.exec(line);
    if (!m) return;
    const body = lines.slice(i + 1, i + 4).join(' ');
    const scope = /Scope `([a-z:]+)`/.exec(body)?.[1] ?? null;
    out.set(`${m[1]} ${m[2]}`, scope);
  });
  return out;
}

describe('the operations table', () => {
  it("has every endpoint of the spec, with the spec's method, path and scope, and nothing else", () => {
    const fromSpec = specEndpoints();
    expect(fromSpec.size).toBe(12);
    const fromTable = new Map(
      (Object.keys(OPERATIONS) as Operation[]).map((op) => [ENDPOINTS[op], OPERATIONS[op].scope]),
    );
    expect(fromTable).toEqual(fromSpec);
  });

  it('writes each spec path once in src/ (the table); every other module derives it', () => {
    const files = srcFiles();
    for (const path of new Set(Object.values(OPERATIONS).map((o) => o.path))) {
      const at = files.filter((f) => readSrc(f).includes(`'${path}'`));
      expect(
        at.map((f) => `src/${f}`),
        path,
      ).toEqual(['src/api/operations.ts']);
    }
  });

  it('marks as mutating exactly the operations with a body, and as linked those acting on an account', () => {
    for (const [op, o] of Object.entries(OPERATIONS)) {
      expect(o.mutates, op).toBe(o.method !== 'GET');
      if (o.mutates) expect(o.linked, op).toBe(true);
    }
    expect(OPERATIONS.getAccount.linked && OPERATIONS.getVault.linked).toBe(true);
    expect(OPERATIONS.getIdentity.scope).toBeNull();
  });
});
