/** A metrics/control server reachable beyond loopback without a control token is warned about. */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { VirtualClock } from '../../src/core/clock.js';
import { LogSink, START } from '../bot/helpers.js';
import { removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterEach(removeTempDirs);

const WARNING = /^metrics server listens beyond loopback without a control token/;

describe('metrics server exposure', () => {
  it.each([
    ['0.0.0.0', false, true],
    ['0.0.0.0', true, false],
    ['127.0.0.1', false, false],
  ])('host %s, token %s: warned %s', async (host, withToken, warned) => {
    const dir = tempDir('packbot-expose-');
    const path = writeConfig(dir, { baseUrl: 'embedded' });
    writeFileSync(
      path,
      readFileSync(path, 'utf8')
        .replace('metrics:\n', `metrics:\n  host: ${host}\n`)
        .replace('control:\n', withToken ? 'control:\n  token_env: PB_TOKEN\n' : 'control:\n'),
    );
    const sink = new LogSink();
    const runner = await Runner.start(loadBotConfig(path, { PB_TOKEN: 'tok_0123456789abcdef' }), {
      clock: new VirtualClock(START),
      logDestination: sink,
      metricsPort: 0,
    });
    await runner.stop('test');
    expect(sink.messages().some((m) => WARNING.test(m))).toBe(warned);
  });
});
