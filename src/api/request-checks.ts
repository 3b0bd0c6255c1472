/**
 * Local checks of every request against the spec's rules, run before any IO so that a request the
 * service would reject (or, worse, misread) is never sent. Failures are `RequestValidationError`s
 * naming the endpoint and the field paths.
 */
import type { z } from 'zod';
import { formatPath } from '../core/format-path.js';
import { RequestValidationError, type SchemaIssue } from './errors.js';
import { ENDPOINTS, OPERATIONS, type Operation } from './operations.js';
import { IdempotencyKey } from './schemas.js';

/** The request schema of each operation (`undefined`: the operation takes no input). */
const REQUEST_SCHEMAS = Object.fromEntries(Object.entries(OPERATIONS).map(([op, o]) => [op, o.request])) as {
  readonly [O in Operation]: (typeof OPERATIONS)[O]['request'];
};

export function issuesOf(error: z.ZodError, prefix = ''): SchemaIssue[] {
  return error.issues.map((i) => {
    const path = formatPath(i.path);
    return { path: prefix && path ? `${prefix}.${path}` : prefix || path, message: i.message };
  });
}

/**
 * Validates `input` for `op` and returns the parsed value (what goes on the wire).
 * Throws `RequestValidationError` listing every problem.
 */
export function checkRequest<O extends Operation>(op: O, input: unknown): unknown {
  const schema: z.ZodType | undefined = REQUEST_SCHEMAS[op];
  if (!schema) {
    if (input !== undefined && !(typeof input === 'object' && input !== null && !Object.keys(input).length))
      throw new RequestValidationError(
        [{ path: '', message: 'this operation takes no parameters' }],
        ENDPOINTS[op],
      );
    return undefined;
  }
  const r = schema.safeParse(input ?? {});
  if (!r.success) throw new RequestValidationError(issuesOf(r.error), ENDPOINTS[op]);
  return r.data;
}

/** The `Idempotency-Key` header rule of both purchase endpoints. */
export function checkIdempotencyKey(op: Operation, key: unknown): string {
  const r = IdempotencyKey.safeParse(key);
  if (!r.success)
    throw new RequestValidationError(
      [{ path: 'Idempotency-Key', message: r.error.issues[0]?.message ?? 'invalid' }],
      ENDPOINTS[op],
    );
  return r.data;
}
