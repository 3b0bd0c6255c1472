/**
 * Who may call a route (its `access`, route.ts): bearer tokens compared in constant time, and the
 * refusals (401, 403) counted and logged through the refusal log. docs/api.md (Access),
 * docs/security.md.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RefusalReason } from './refusals.js';
import type { Access, AnyReply } from './route.js';

export interface NamedToken {
  name: string;
  token: string;
}

export interface AccessOptions {
  /** Tokens accepted for control and, once there is one, for every read. Empty: control is 404. */
  tokens: readonly NamedToken[];
  /** The server listens beyond loopback: reads need a token even when none is configured (403). */
  readsNeedToken: boolean;
  /** The token `/metrics` needs; empty: open. */
  metricsTokens: readonly NamedToken[];
  /** Counts and (rate-limited) logs a refused request. */
  refused: (reason: RefusalReason, route: string) => void;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The name of the token the request carries, or undefined. Constant time per token. The scheme is
 * case-insensitive (RFC 9110 §11.1): `bearer`, `BEARER` and `Bearer` are one.
 */
function tokenName(req: IncomingMessage, tokens: readonly NamedToken[]): string | undefined {
  const m = /^Bearer +(.+?) *$/i.exec(req.headers.authorization ?? '');
  if (!m) return undefined;
  const given = digest(m[1]!);
  let found: string | undefined;
  for (const t of tokens) if (timingSafeEqual(given, digest(t.token)) && found === undefined) found = t.name;
  return found;
}

const UNAUTHORIZED: AnyReply = {
  status: 401,
  body: { error: 'unauthorized' },
  headers: { 'WWW-Authenticate': 'Bearer' },
};
const NO_TOKEN: AnyReply = {
  status: 403,
  body: { error: 'reads need a token beyond loopback: set control.token_env' },
};

/** The name the caller acts under (undefined: none given, and none needed), or the refusal to send. */
export function checkAccess(
  req: IncomingMessage,
  access: Access,
  route: string,
  o: AccessOptions,
): { by: string | undefined } | { refusal: AnyReply } {
  const tokens = access === 'metrics' ? o.metricsTokens : o.tokens;
  if (access === 'open' || (access === 'metrics' && tokens.length === 0)) return { by: undefined };
  if (access === 'read' && tokens.length === 0) {
    if (!o.readsNeedToken) return { by: undefined };
    o.refused('no_token', route);
    return { refusal: NO_TOKEN };
  }
  // Control with no token configured finds none here: 401, should a route forget `needs: ['token']`.
  const by = tokenName(req, tokens);
  if (by !== undefined) return { by };
  o.refused('token', route);
  return { refusal: UNAUTHORIZED };
}

/** The refusals a route of this access can answer, for the OpenAPI document and docs/api.md. */
export function refusalsOf(access: Access): Record<number, string> {
  switch (access) {
    case 'open':
      return {};
    case 'read':
      return {
        401: 'a control token is configured and the request carries none of them',
        403: 'the server listens beyond loopback and no control token is configured',
      };
    case 'control':
      return { 401: 'no valid control token' };
    case 'metrics':
      return { 401: 'metrics.token_env is set and the request does not carry that token' };
  }
}
