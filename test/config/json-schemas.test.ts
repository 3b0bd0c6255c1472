import { describe, expect, it } from 'vitest';
import { FORMATS } from '../../src/config/formats.js';
import { generateJsonSchemas, staleJsonSchemas } from '../../src/config/json-schemas.js';

describe('JSON Schemas', () => {
  it('schemas/*.json match the zod schemas (regenerate: node dist/src/config/json-schemas.js --write)', () => {
    expect(staleJsonSchemas()).toEqual([]);
  });

  it('has one schema per kind of file (older formats share it), with defaulted fields optional', () => {
    const all = generateJsonSchemas();
    expect(Object.keys(all).length).toBe(new Set(Object.values(FORMATS).map((f) => f.kind)).size);
    const strategy = JSON.parse(all['strategy.schema.json']!);
    expect(strategy.required).toEqual(['format']);
    expect(strategy.properties.sell.properties.threshold_usd.default).toBe(50);
  });
});
