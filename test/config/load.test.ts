import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InputFileError, parseSource, validateSource } from '../../src/config/load.js';

const Schema = z.strictObject({
  name: z.string(),
  budget: z.strictObject({ max_daily_spend_usd: z.number().positive() }),
  list: z.array(z.number()).optional(),
});

function issuesOf(text: string) {
  try {
    validateSource(parseSource(text, 'f.yaml'), Schema);
  } catch (e) {
    expect(e).toBeInstanceOf(InputFileError);
    return (e as InputFileError).issues;
  }
  throw new Error('expected a failure');
}

describe('loadFile', () => {
  it('names file, line, column and field path of a schema error', () => {
    const issues = issuesOf('name: x\nbudget:\n  max_daily_spend_usd: -5\n');
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      file: 'f.yaml',
      line: 3,
      column: 24,
      path: 'budget.max_daily_spend_usd',
    });
  });

  it('locates array items and unknown keys', () => {
    const issues = issuesOf('name: x\nbudget: {max_daily_spend_usd: 1}\nlist: [1, "two"]\nextra: 1\n');
    expect(issues.map((i) => `${i.line}:${i.path}`).sort()).toEqual(['1:', '3:list[1]'].sort());
  });

  it('reports YAML syntax errors with a position', () => {
    const issues = issuesOf('name: x\nbudget: [\n');
    expect(issues[0]?.line).toBeGreaterThan(0);
  });

  it('parses JSON too and freezes the result', () => {
    const v = validateSource(
      parseSource('{"name":"a","budget":{"max_daily_spend_usd":2}}', 'f.json'),
      Schema,
    );
    expect(v.name).toBe('a');
    expect(Object.isFrozen(v.budget)).toBe(true);
  });
});
