/**
 * Keeps three descriptions of the errors in step: the spec's Errors table (vendored at
 * docs/spec/partner-api.md), errors.ts, and docs/errors.md. Any disagreement fails here.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/api/errors.js';
import {
  DailyLimitReachedError,
  ERRORS_BY_SPEC_CODE,
  ERRORS_BY_STATUS,
  errorFromResponse,
  PartnerApiError,
  PriceChangedError,
  RateLimitedError,
  RequestValidationError,
  SchemaError,
  ServerError,
  TransportError,
  UnexpectedStatusError,
} from '../../src/api/errors.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const vendoredSpec = resolve(root, 'docs/spec/partner-api.md');
const sharedSpec = resolve(root, '../shared/spec/partner-api.md');
/** The digest of the spec as vendored, committed beside it: checked on every clone. */
const specDigest = resolve(root, 'docs/spec/partner-api.md.sha256');
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Rows of the first markdown table after `heading`, as arrays of trimmed cells. */
function tableUnder(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`no "${heading}" section`);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,2} /.test(line)) break;
    if (line.trim().startsWith('|')) {
      inTable = true;
      rows.push(
        line
          .trim()
          .replace(/^\||\|$/g, '')
          .split('|')
          .map((c) => c.trim()),
      );
    } else if (inTable) break;
  }
  if (rows.length < 3) throw new Error(`no table under "${heading}"`);
  return rows.slice(2); // header and separator
}

const backticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** Spec extra-fields cell → body fields and headers ("`a`, `b`; header `Retry-After`"). */
function specExtras(cell: string): { body: string[]; headers: string[] } {
  const body: string[] = [];
  const headers: string[] = [];
  for (const part of cell.split(';'))
    (/^\s*headers?\b/i.test(part) ? headers : body).push(...backticked(part).map((t) => t));
  return { body, headers: headers.map((h) => h.toLowerCase()) };
}

/** Sample wire values for every extra field the spec names. */
const SAMPLE: Record<string, unknown> = {
  card_id: 'card-9',
  price: 12.5,
  max_price: 10,
  retry_after_seconds: 37,
  limit: 100,
  used: 100,
  resets_at: '2026-01-02T00:00:00.000Z',
};

const specRows = tableUnder(readFileSync(vendoredSpec, 'utf8'), '## Errors').map(
  ([status, code, applies, when, extra]) => ({
    status: Number(status),
    code: code === 'none' ? undefined : code!.replaceAll('`', ''),
    applies: applies!,
    when: when!,
    extra: specExtras(extra ?? ''),
  }),
);

describe('the vendored spec', () => {
  it('matches the digest committed beside it (an edit to the spec is deliberate)', () => {
    expect(sha256(vendoredSpec)).toBe(readFileSync(specDigest, 'utf8').split(/\s+/)[0]);
  });

  // Where the steering checkout sits beside the repository (development machines), the vendored
  // copy must also be the current upstream spec; the digest above holds on every clone.
  it.runIf(existsSync(sharedSpec))('equals ../shared/spec/partner-api.md', () => {
    expect(sha256(vendoredSpec)).toBe(sha256(sharedSpec));
  });

  it('has an Errors table', () => {
    expect(specRows.length).toBeGreaterThanOrEqual(10);
    for (const r of specRows) expect(Number.isInteger(r.status)).toBe(true);
  });
});

describe('spec Errors table ⇔ errors.ts', () => {
  it.each(specRows.filter((r) => r.code))(
    '$status $code has a class with that status and extra fields',
    (row) => {
      const cls = ERRORS_BY_SPEC_CODE[row.code as keyof typeof ERRORS_BY_SPEC_CODE];
      expect(cls, `no class for spec code ${row.code}`).toBeDefined();
      const extras: Record<string, unknown> = {};
      for (const f of row.extra.body) {
        expect(SAMPLE, `no sample value for extra field ${f}`).toHaveProperty(f);
        extras[f] = SAMPLE[f];
      }
      const err = errorFromResponse(row.status, { error: 'x', code: row.code, ...extras }, 'POST /x');
      expect(err).toBeInstanceOf(cls);
      expect(err.status).toBe(row.status);
      expect(err.code).toBe(row.code);
      const wire = err.toWire();
      expect(wire.status).toBe(row.status);
      const { error: _e, code: _c, ...wireExtras } = wire.body;
      // Parsed from the body and serialised back unchanged: the class carries exactly these fields.
      expect(wireExtras).toEqual(extras);
      expect(Object.keys(wire.headers ?? {}).map((h) => h.toLowerCase())).toEqual(row.extra.headers);
    },
  );

  it.each(specRows.filter((r) => !r.code))('$status (no code, $applies) has a status class', (row) => {
    const cls = ERRORS_BY_STATUS[row.status as keyof typeof ERRORS_BY_STATUS];
    expect(cls, `no class for status ${row.status}`).toBeDefined();
    const err = errorFromResponse(row.status, { error: 'x' }, 'GET /x');
    expect(err).toBeInstanceOf(cls);
    expect(err.status).toBe(row.status);
    expect(row.extra.body).toEqual([]);
  });

  it('every coded class in errors.ts is in the spec with its status', () => {
    for (const [code, cls] of Object.entries(ERRORS_BY_SPEC_CODE)) {
      const row = specRows.find((r) => r.code === code);
      expect(row, `${code} is not in the spec`).toBeDefined();
      expect(errorFromResponse(row!.status, { error: 'x', code }, 'GET /x')).toBeInstanceOf(cls);
    }
  });

  it('every status class in errors.ts is a no-code row of the spec', () => {
    for (const status of Object.keys(ERRORS_BY_STATUS).map(Number))
      expect(
        specRows.some((r) => r.status === status && !r.code),
        `status ${status}`,
      ).toBe(true);
  });

  it('takes RATE_LIMITED seconds from the Retry-After header when the body has none', () => {
    const err = errorFromResponse(429, { error: 'x', code: 'RATE_LIMITED' }, 'POST /packs/purchase', '9');
    expect((err as RateLimitedError).retryAfterSeconds).toBe(9);
  });
});

// ---------- docs/errors.md ⇔ errors.ts ----------

type ErrorClass = abstract new (...args: never[]) => PartnerApiError;

const exportedClasses: Array<[string, ErrorClass]> = Object.entries(errors as Record<string, unknown>)
  .filter(([, v]) => typeof v === 'function' && v.prototype instanceof PartnerApiError)
  .map(([n, v]) => [n, v as ErrorClass]);

function sample(cls: ErrorClass): PartnerApiError {
  const C = cls as unknown as new (...args: unknown[]) => PartnerApiError;
  if (cls === PriceChangedError) return new PriceChangedError('c', 2, 1);
  if (cls === RateLimitedError) return new RateLimitedError(5);
  if (cls === DailyLimitReachedError) return new DailyLimitReachedError(100, 100, 'x');
  if (cls === UnexpectedStatusError) return new UnexpectedStatusError('m', 418);
  if (cls === TransportError) return new TransportError('reset', 'm');
  if (cls === SchemaError || cls === RequestValidationError) return new C([]);
  if (cls === ServerError || cls.prototype instanceof ServerError) return new C('m');
  return new C('m');
}

const docRows = tableUnder(readFileSync(resolve(root, 'docs/errors.md'), 'utf8'), '# Errors').map(
  ([cls, code, kind, status, extra, does]) => ({
    cls: cls!,
    code: code!,
    kind: kind!,
    status: status!,
    extra: extra!,
    does: does!,
  }),
);

describe('docs/errors.md ⇔ errors.ts', () => {
  it('documents every exported error class, and only those', () => {
    expect(docRows.map((r) => r.cls).sort()).toEqual(exportedClasses.map(([n]) => n).sort());
  });

  it.each(exportedClasses)('%s: code, kind, status and extra fields match', (name, cls) => {
    const row = docRows.find((r) => r.cls === name)!;
    expect(row, `${name} missing from docs/errors.md`).toBeDefined();
    const e = sample(cls);
    expect(row.code).toBe(e.code);
    expect(row.kind).toBe(e.kind);
    const expectedStatus =
      cls === UnexpectedStatusError ? 'other' : e.status === undefined ? '—' : String(e.status);
    expect(row.status).toBe(expectedStatus);
    expect(row.does.length).toBeGreaterThan(10);

    const wire = e.toWire();
    const { error: _e, code: _c, ...wireExtras } = wire.body;
    const tokens = backticked(row.extra).map((t) => t.toLowerCase());
    // Every wire extra and header is documented...
    for (const k of [...Object.keys(wireExtras), ...Object.keys(wire.headers ?? {})])
      expect(tokens, `${name}: ${k} not documented`).toContain(k.toLowerCase());
    // ...and every documented name is a real property, wire field or header of the error.
    const known = new Set(
      [...Object.keys(e), ...Object.keys(wireExtras), ...Object.keys(wire.headers ?? {})].map((k) =>
        k.toLowerCase(),
      ),
    );
    for (const t of tokens) expect(known, `${name}: documents unknown field ${t}`).toContain(t);
  });
});
