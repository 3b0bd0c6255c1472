/**
 * The layering rule of .dependency-cruiser.cjs (docs/architecture.md), run by `npm run lint`:
 * the clean tree passes, and an import against the layers, between the sibling layers or in a
 * cycle fails with the rule's name. The bad imports are planted in a scratch tree, never in src/.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const bin = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const config = join(root, '.dependency-cruiser.cjs');

function cruise(cwd: string): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [bin, 'src', '--config', config], { cwd, encoding: 'utf8' });
    return { code: 0, out };
  } catch (e) {
    const err = e as { status: number; stdout: string; stderr: string };
    return { code: err.status, out: `${err.stdout}${err.stderr}` };
  }
}

const scratch: string[] = [];
afterAll(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

/** A scratch project: files by path (relative to its root) → content. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'packbot-layers-'));
  scratch.push(dir);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' },
      include: ['src'],
    }),
  );
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('the layering lint', () => {
  it('passes on the clean tree', () => {
    const r = cruise(root);
    expect(r.out).toMatch(/no dependency violations/);
    expect(r.code).toBe(0);
  });

  it.each([
    ['src/strategy importing the CLI', 'src/strategy/x.ts', "import '../cli/main.js';\n", 'layer-strategy'],
    ['src/market importing the runner', 'src/market/x.ts', "import '../bot/runner.js';\n", 'layer-market'],
    [
      'src/bot importing the backtest',
      'src/bot/x.ts',
      "import '../backtest/run/run.js';\n",
      'siblings-bot-backtest',
    ],
    [
      'a backtest path importing the engine above it',
      'src/backtest/path/x.ts',
      "import '../run/run.js';\n",
      'backtest-path',
    ],
    ['the executor importing a view', 'src/bot/spending/x.ts', "import '../views/v.js';\n", 'bot-spending'],
    ['a view importing the lifecycle', 'src/bot/views/x.ts', "import '../runner.js';\n", 'bot-views'],
    ['src/strategy reading files', 'src/strategy/x.ts', "import 'node:fs';\n", 'pure-core'],
  ])('fails on %s, naming the rule', (_label, file, text, rule) => {
    const dir = project({
      [file]: text,
      'src/cli/main.ts': 'export {};\n',
      'src/bot/runner.ts': 'export {};\n',
      'src/backtest/run/run.ts': 'export {};\n',
      'src/bot/views/v.ts': 'export {};\n',
    });
    const r = cruise(dir);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(`error ${rule}:`);
  });

  it('fails on an import cycle', () => {
    const dir = project({
      'src/backtest/a.ts': "import './b.js';\nexport {};\n",
      'src/backtest/b.ts': "import './a.js';\nexport {};\n",
    });
    const r = cruise(dir);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('error no-circular:');
  });
});
