/**
 * docs/simulator.md keeps one row for every choice the spec leaves open: it quotes every "not
 * shown" line of the vendored spec the simulator decides, and names every rule of
 * SILENT_SPEC_RULES with its default.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/package-root.js';
import { SILENT_SPEC_RULES } from '../../src/market/server-choices.js';
import { RulesSpec } from '../../src/market/world-schema.js';

const root = packageRoot();
const spec = readFileSync(join(root, 'docs/spec/partner-api.md'), 'utf8');
const docs = readFileSync(join(root, 'docs/simulator.md'), 'utf8');
const section = docs.slice(
  docs.indexOf('## Choices where the spec says "not shown"'),
  docs.indexOf('## Dynamics'),
);
/** Lines the simulator has nothing to decide for (it has no events and one version). */
const NOTHING_TO_DECIDE = [/^Events: not shown/, /^- Change policy/];

describe('docs/simulator.md: choices where the spec says "not shown"', () => {
  const lines = spec
    .split('\n')
    .filter((l) => l.includes('not shown') && !NOTHING_TO_DECIDE.some((re) => re.test(l)))
    .map((l) => l.replace(/^(- |\d+\. )/, '').trim());

  it('quotes every "not shown" line of the spec it decides', () => {
    expect(lines.length).toBe(12);
    for (const line of lines) {
      // The quoted sentence, from the start of the line to "not shown." (a line may go on after it).
      const quote = line.slice(0, line.indexOf('not shown') + 'not shown.'.length);
      const sentence = quote.slice(quote.lastIndexOf('. ', quote.length - 12) + 1).trim();
      expect(section, line).toContain(`"${sentence}"`);
    }
  });

  it.each([...SILENT_SPEC_RULES])('names %s with its default', (rule) => {
    expect(section).toContain(`\`${rule}\``);
    const value = RulesSpec.parse({})[rule];
    expect(section, `${rule} default ${String(value)}`).toMatch(
      new RegExp(`\`${rule}\`[^|]*\\(\`?${String(value).replace(/[.+]/g, '\\$&')}`),
    );
  });
});
