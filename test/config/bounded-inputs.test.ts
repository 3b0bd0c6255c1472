/**
 * Bounded inputs: JSON is parsed as JSON and located by a linear scan (a 50 MB snapshot validates),
 * YAML's resource limits (an alias bomb, nesting, size) are exit 2 naming the file, never a crash.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonDepth, jsonErrorOffset, locateJson } from '../../src/config/json-locate.js';
import { InputFileError, MAX_YAML_BYTES, parseSource } from '../../src/config/load.js';
import { runCli } from '../cli/run-cli.js';
import { ROOT } from '../e2e/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'packbot-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const SAMPLE = `{
  "name": "a",
  "weird \\"key\\"": {"x": [1, {"y": "}]"}, [3, 4]]},
  "list": [ 10 , 20,
    30 ],
  "empty": {}
}`;

describe('locateJson', () => {
  it.each([
    [[], 1, 1],
    [['name'], 2, 11],
    [['weird "key"', 'x', 1, 'y'], 3, 36],
    [['weird "key"', 'x', 2, 1], 3, 47],
    [['list', 2], 5, 5],
    [['list', 9], 4, 11],
    [['empty', 'missing'], 6, 12],
    [['missing', 'deeper'], 1, 1],
  ] as const)('%j is at %i:%i', (path, line, column) => {
    expect(locateJson(SAMPLE, path)).toEqual({ line, column });
  });

  it('agrees with the positioned YAML parser on a real file', () => {
    const text = readFileSync(join(ROOT, 'test/fixtures/snapshot-hand.json'), 'utf8');
    const yamlOf = parseSource(` ${text}`, 'x.yaml'); // a leading space: not taken as JSON
    const data = JSON.parse(text) as { pools: { bands: unknown[] }[] };
    const paths: PropertyKey[][] = [['format'], ['pools', 0], ['pools', 0, 'bands', 1], ['account']];
    if (data.pools[1]) paths.push(['pools', 1, 'bands', 0]);
    for (const path of paths) {
      const y = yamlOf.locate(path)!;
      const column = y.line === 1 ? y.column - 1 : y.column;
      expect(locateJson(text, path), JSON.stringify(path)).toEqual({ line: y.line, column });
    }
  });

  it.each([
    ['{"a": 1,}', 8],
    ['{"a" 1}', 5],
    ['[1, 2', 5],
    ['[1 2]', 3],
    ['{"a": [tru]}', 7],
    ['{"a": 1} x', 9],
    ['{"a": "x\\"}, "b": 1}', 14],
    ['[-01]', 3],
    ['{"a": [1, {"b": null}], "c": "}"}', undefined],
  ] as const)('finds the syntax error of %s at %s', (text, at) => {
    expect(jsonErrorOffset(text)).toBe(at);
  });

  it('counts nesting without recursion, strings aside', () => {
    expect(jsonDepth('{"a": [[1], "[[[["], "b": {}}')).toBe(3);
    expect(jsonDepth(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toBe(100_000);
  });
});

describe('resource limits are exit 2 naming the file', () => {
  it('an alias bomb', async () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const [i, n] of ['b', 'c', 'd', 'e', 'f', 'g'].entries()) {
      const prev = String.fromCharCode(97 + i);
      levels.push(`${n}: &${n} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const file = write('bomb.yaml', `format: packbot.strategy/v1\n${levels.join('\n')}\n`);
    const r = await runCli(['validate', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: YAML resource limit: Excessive alias count`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('nesting deeper than any packbot file, in JSON and in YAML', async () => {
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const json = write(
      'deep.json',
      `{"format":"packbot.snapshot/v1","taken_at":"2026-01-01T00:00:00Z","source":"x","account":null,"pools":[],"x":${deep}}`,
    );
    const yaml = write('deep.yaml', `format: packbot.strategy/v1\nx: ${'['.repeat(150)}${']'.repeat(150)}\n`);
    for (const file of [json, yaml]) {
      const r = await runCli(['validate', file]);
      expect(r.code, file).toBe(2);
      expect(r.stderr).toContain(`${file}: nested more than 100 levels deep`);
    }
  });

  it('YAML larger than the parser is given', () => {
    const big = `format: packbot.strategy/v1\nnote: "${'x'.repeat(MAX_YAML_BYTES)}"\n`;
    expect(() => parseSource(big, 'big.yaml')).toThrow(InputFileError);
    expect(() => parseSource(big, 'big.yaml')).toThrow(
      /big\.yaml: too large for YAML .*write large files as JSON/,
    );
  });
});

describe('a 50 MB snapshot', () => {
  const base = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/sim-pokemon-snapshot.json'), 'utf8')) as {
    pools: unknown[];
  };
  // As many copies of the fixture's pools as make 50 MB of pretty JSON.
  const copies = Math.ceil((50 * 1024 * 1024) / JSON.stringify(base, null, 2).length);
  const text = JSON.stringify(
    { ...base, pools: Array.from({ length: copies }, () => base.pools).flat() },
    null,
    2,
  );

  it('validates, and an error near its end names the line', async () => {
    expect(text.length).toBeGreaterThan(50 * 1024 * 1024);
    const ok = write('big.json', text);
    const r = await runCli(['validate', ok]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`${ok}: ok (snapshot`);
    expect(r.code).toBe(0);

    // The last pool's price made a string, by editing the text (no second copy of the data).
    const last = copies * base.pools.length - 1;
    const at = text.lastIndexOf('"price": ');
    const end = text.indexOf(',', at);
    const badText = `${text.slice(0, at)}"price": "twelve"${text.slice(end)}`;
    let line = 1;
    for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
    const badFile = write('big-bad.json', badText);
    const e = await runCli(['validate', badFile]);
    expect(e.code).toBe(2);
    expect(e.stderr).toMatch(new RegExp(`big-bad\\.json:${line}:\\d+: pools\\[${last}\\]\\.price:`));

    // Broken JSON of that size: JSON.parse's own position, not the YAML parser.
    const broken = write('big-broken.json', `${text.slice(0, -100)},,${text.slice(-100)}`);
    const b = await runCli(['validate', broken]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/big-broken\.json:\d+:\d+: not valid JSON/);
  }, 120_000);
});
