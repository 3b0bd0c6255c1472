/**
 * One ordering for ids and keys (pack types, card ids, idempotency keys, map keys in reports):
 * the English collation `localeCompare` gave on an English machine, computed without ICU for the
 * characters ids are made of. `Intl.Collator` and `localeCompare` load ICU's collation data,
 * ~3 MiB of a long-running bot's resident set (docs/runner.md, "Footprint"), and follow the
 * machine's locale, so a Danish `LANG` could reorder a backtest's ties. Strings with any other
 * character fall back to a collator for `en`, made on first use: the same order, everywhere.
 */

/** Characters in the English collation's primary order; a letter's capital shares its rank. */
const ORDER = '_-./0123456789abcdefghijklmnopqrstuvwxyz';
/** Primary rank + 1 per ASCII code; 0 for a character the table does not order. */
const PRIMARY = new Uint8Array(128);
for (let i = 0; i < ORDER.length; i++) {
  const c = ORDER.charCodeAt(i);
  PRIMARY[c] = i + 1;
  if (c >= 97 && c <= 122) PRIMARY[c - 32] = i + 1;
}

let fallback: Intl.Collator | undefined;

function inTable(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || PRIMARY[c] === 0) return false;
  }
  return true;
}

/** Negative, zero or positive as `a` sorts before, with or after `b` (like `localeCompare`). */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  if (!inTable(a) || !inTable(b)) {
    fallback ??= new Intl.Collator('en');
    return fallback.compare(a, b);
  }
  // The collation's levels: letters, digits and marks first over the whole string (a prefix
  // sorts first); only then case, where the first difference puts the lower case first.
  const n = Math.min(a.length, b.length);
  let byCase = 0;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const px = PRIMARY[x]!;
    const py = PRIMARY[y]!;
    if (px !== py) return px < py ? -1 : 1;
    if (byCase === 0) byCase = x > y ? -1 : 1;
  }
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return byCase;
}
