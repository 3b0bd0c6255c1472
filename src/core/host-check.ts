/**
 * Which `Host` a packbot HTTP server answers to (the bot's, the simulator's and its admin API).
 * A page an attacker serves can make a browser send requests to 127.0.0.1 under the attacker's own
 * name (DNS rebinding): such a request carries that name in `Host`, so a server that answers only
 * to names it knows cannot be read that way. Allowed: loopback names (`localhost`, `127.0.0.1`,
 * `[::1]`), the listen address, the names the operator lists, and any IP literal — a browser sends
 * an IP literal only for a page loaded from that very address, which no rebinding can produce, and
 * health checks and Prometheus's pod discovery address a server by its IP. The port is not judged:
 * a reverse proxy or a port mapping may put another one there.
 */

const LOOPBACK_HOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** Listen addresses that mean "every interface": not a name anyone reaches the server by. */
const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]']);

/** A host name as compared: lower case, no brackets, no trailing dot. */
function normalHostName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/** The names a server listening on `listenHost` answers to, besides IP literals. */
export function hostAllowList(
  listenHost: string | undefined,
  extra: readonly string[] = [],
): ReadonlySet<string> {
  const names = new Set(LOOPBACK_HOST_NAMES);
  if (listenHost !== undefined && !WILDCARDS.has(listenHost.trim())) names.add(normalHostName(listenHost));
  for (const n of extra) names.add(normalHostName(n));
  return names;
}

/**
 * The name part of a `Host` header (`name`, `name:port`, `[v6]` or `[v6]:port`), normalised; undefined
 * when the header is missing or malformed.
 */
export function hostHeaderName(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const h = header.trim();
  const v6 = /^\[([0-9a-fA-F:.]+)\](?::\d{1,5})?$/.exec(h);
  if (v6) return normalHostName(v6[1]!);
  const named = /^([A-Za-z0-9._-]+)(?::\d{1,5})?$/.exec(h);
  return named ? normalHostName(named[1]!) : undefined;
}

function isIpv4(name: string): boolean {
  const parts = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name) ? name.split('.') : [];
  return parts.length === 4 && parts.every((p) => Number(p) <= 255);
}

/** Whether a request with this `Host` header may be answered. */
export function hostAllowed(header: string | undefined, allowed: ReadonlySet<string>): boolean {
  const raw = header?.trim() ?? '';
  const name = hostHeaderName(raw);
  if (name === undefined) return false;
  if (allowed.has(name)) return true;
  // A bracketed header is an IPv6 literal (the pattern above admits only hex digits, colons, dots).
  return raw.startsWith('[') || isIpv4(name);
}
