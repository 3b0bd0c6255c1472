import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, REDACTED, SecretRegistry } from '../../src/obs/logger.js';

const KEY = 'sk_live_9f8e7d6c5b4a';

function collector() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, stream };
}

describe('logger', () => {
  it('writes JSON lines with the level and the injected clock time', () => {
    const { lines, stream } = collector();
    const log = createLogger({ destination: stream, level: 'debug', now: () => 1234 });
    log.debug({ n: 1 }, 'hello');
    const obj = JSON.parse(lines[0]!);
    expect(obj).toMatchObject({ level: 20, msg: 'hello', n: 1, time: 1234, name: 'packbot' });
  });

  it('honours the level', () => {
    const { lines, stream } = collector();
    const log = createLogger({ destination: stream, level: 'warn' });
    log.info('quiet');
    log.warn('loud');
    expect(lines).toHaveLength(1);
  });

  it('never prints a registered key, wherever it is passed', () => {
    const secrets = new SecretRegistry();
    secrets.add(KEY);
    const { lines, stream } = collector();
    const log = createLogger({ destination: stream, secrets, level: 'trace' });
    log.info({ apiKey: KEY }, 'field');
    log.info({ headers: { authorization: `Bearer ${KEY}` } }, 'header');
    log.info({ req: { headers: { Authorization: `Bearer ${KEY}` } } }, 'req header');
    log.info({ deep: { nested: { whatever: [`x${KEY}y`] } } }, 'odd field name');
    log.info(`message with ${KEY} inside`);
    log.error({ err: new Error(`failed with key ${KEY}`) }, 'error');
    log.child({ account: { key: KEY, name: 'main' } }).warn('child binding');
    log.child({ url: `https://x.example/?k=${KEY}` }).info('binding value');
    log.info({ config: { token: KEY } }, 'token');
    expect(lines).toHaveLength(9);
    for (const line of lines) {
      expect(line).not.toContain(KEY);
      expect(line).not.toContain(KEY.slice(3));
      JSON.parse(line);
    }
    expect(lines.join('')).toContain(REDACTED);
    expect(JSON.parse(lines[0]!).apiKey).toBe(REDACTED);
    expect(JSON.parse(lines[6]!).account).toEqual({ key: REDACTED, name: 'main' });
  });

  it('redacts key-named fields by configuration even before a secret is registered', () => {
    const { lines, stream } = collector();
    const log = createLogger({ destination: stream });
    log.info({ apiKey: 'sk_unregistered_1', headers: { authorization: 'Bearer sk_unregistered_2' } });
    expect(lines[0]).not.toContain('sk_unregistered');
  });

  it('masks secrets containing JSON-escaped characters', () => {
    const secrets = new SecretRegistry();
    const odd = 'abc"def\\ghi';
    secrets.add(odd);
    const { lines, stream } = collector();
    createLogger({ destination: stream, secrets }).info({ note: `x ${odd} y` });
    expect(JSON.parse(lines[0]!).note).toBe(`x ${REDACTED} y`);
  });

  it('pretty-prints on request, still masking', () => {
    const secrets = new SecretRegistry();
    secrets.add(KEY);
    const { lines, stream } = collector();
    createLogger({ destination: stream, secrets, pretty: 'always' }).info(`pretty ${KEY}`);
    const text = lines.join('');
    expect(text).toContain('pretty');
    expect(text).not.toContain(KEY);
    expect(() => JSON.parse(text)).toThrow();
  });

  it('ignores trivially short secrets (they would mask ordinary words)', () => {
    const secrets = new SecretRegistry();
    secrets.add('', undefined, 'ab');
    expect(secrets.size).toBe(0);
  });
});
