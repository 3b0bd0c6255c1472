/**
 * A path into a document as a user reads it in an error message: `pulls[0].item.market_value`
 * from a zod issue path (or a YAML node's), for config files and API requests alike.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}
