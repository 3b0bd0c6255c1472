/**
 * Maps what `fetch` throws (a TypeError whose `cause` chain holds undici's or the OS's error) to
 * `TransportError.failure`. `connect` means nothing reached the service, which is what lets the
 * retry policy re-send even a non-idempotent write.
 */
import { TransportError, type TransportFailure } from './errors.js';

const CONNECT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const RESET = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);
const TIMEOUT = new Set(['ETIMEDOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function chain(e: unknown): unknown[] {
  const out: unknown[] = [];
  for (let x = e; x !== undefined && x !== null && out.length < 8; x = (x as { cause?: unknown }).cause)
    out.push(x);
  return out;
}

function classifyTransport(e: unknown): { failure: TransportFailure; detail: string } {
  for (const x of chain(e)) {
    if (typeof x !== 'object' || x === null) continue;
    const code = (x as { code?: unknown }).code;
    const name = (x as { name?: unknown }).name;
    if (typeof code === 'string') {
      if (CONNECT.has(code)) return { failure: 'connect', detail: code };
      if (RESET.has(code)) return { failure: 'reset', detail: code };
      if (TIMEOUT.has(code)) return { failure: 'timeout', detail: code };
    }
    if (name === 'TimeoutError') return { failure: 'timeout', detail: 'request deadline exceeded' };
    if (name === 'AbortError') return { failure: 'aborted', detail: 'aborted' };
  }
  const first = chain(e).at(-1);
  const detail =
    first instanceof Error
      ? `${(first as { code?: string }).code ?? first.name}: ${first.message}`
      : String(first);
  return { failure: 'other', detail };
}

const WHAT: Record<TransportFailure, string> = {
  connect: 'could not connect',
  reset: 'connection reset',
  timeout: 'timed out',
  aborted: 'aborted',
  other: 'transport failure',
};

export function transportError(e: unknown, endpoint: string, phase: 'request' | 'body'): TransportError {
  const { failure, detail } = classifyTransport(e);
  const where = phase === 'body' ? ' while reading the response body' : '';
  return new TransportError(failure, `${endpoint}: ${WHAT[failure]}${where} (${detail})`, endpoint, {
    cause: e,
  });
}
