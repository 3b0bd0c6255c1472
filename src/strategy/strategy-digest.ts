/**
 * A strategy's version: the SHA-256 of the validated strategy (every field, defaults filled in,
 * in the schema's order). Two files that mean the same strategy have the same digest (comments and
 * formatting do not count); any change to a setting gives a new one. Recorded with every order so
 * expected-vs-realized is read per version.
 */
import { createHash } from 'node:crypto';
import type { Strategy } from './strategy-schema.js';

const texts = new WeakMap<Strategy, string>();
const digests = new WeakMap<Strategy, string>();

/** The strategy as JSON text, as the ledger keeps a version and as its digest hashes it (once per object). */
export function strategyText(strategy: Strategy): string {
  let t = texts.get(strategy);
  if (t === undefined) {
    t = JSON.stringify(strategy);
    texts.set(strategy, t);
  }
  return t;
}

export function strategyDigest(strategy: Strategy): string {
  let d = digests.get(strategy);
  if (d === undefined) {
    d = createHash('sha256').update(strategyText(strategy)).digest('hex');
    digests.set(strategy, d);
  }
  return d;
}

/** The short form reports show (12 hex digits). */
export const shortDigest = (digest: string): string => digest.slice(0, 12);
