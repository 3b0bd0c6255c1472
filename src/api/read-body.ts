/**
 * Reads a response body up to a cap. A service (or anything pretending to be one) that answers
 * with hundreds of megabytes would otherwise be buffered whole: the cap turns it into a named
 * error before memory runs out. A declared `Content-Length` over the cap is refused before a byte
 * is read (and one within it binds the body); a body without one is counted as it streams and cut
 * off at the cap.
 */

/** The default cap (`api.max_response_mb`: 32 MiB); the spec's largest page is a few MB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export class BodyTooLarge extends Error {
  constructor(
    readonly limitBytes: number,
    /** The declared length, or the bytes read when the cap was passed. */
    readonly seenBytes: number,
    readonly declared: boolean,
  ) {
    super(
      `response body ${declared ? 'declares' : 'passed'} ${seenBytes} bytes, more than the ${limitBytes}-byte cap (api.max_response_mb)`,
    );
    this.name = 'BodyTooLarge';
  }
}

/**
 * The body as text, or BodyTooLarge (the stream is cancelled, so the connection is not read on).
 * Errors of the stream itself (reset, timeout) propagate as they are.
 */
export async function readCappedText(response: Response, limitBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limitBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new BodyTooLarge(limitBytes, declared, true);
  }
  // A declared length within the cap binds the body (undici fails a body that runs past it), so
  // it is read the fast way; only a body of unknown length is counted as it streams.
  if (Number.isFinite(declared) && response.headers.get('content-length') !== null) return response.text();
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLarge(limitBytes, size, false);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
