/**
 * An endpoint pause is an operator's decision: it survives a restart of the bot (kept beside the
 * ledger) and shows as `packbot_paused{reason="endpoint"} 1` until resumed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { VirtualClock } from '../../src/core/clock.js';
import { LogSink, START } from '../bot/helpers.js';
import { removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterEach(removeTempDirs);

const TOKEN = 'tok_0123456789abcdef';

describe('endpoint pause across a restart', () => {
  it('is still paused after a restart, until resumed', async () => {
    const dir = tempDir('packbot-pause-');
    const path = writeConfig(dir, { baseUrl: 'embedded' });
    const { writeFileSync, readFileSync } = await import('node:fs');
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace('control:\n', 'control:\n  token_env: PB_TOKEN\n'),
    );
    const config = loadBotConfig(path, { PB_TOKEN: TOKEN });
    const start = () =>
      Runner.start(config, { clock: new VirtualClock(START), logDestination: new LogSink(), metricsPort: 0 });
    const post = (url: string, what: string) =>
      fetch(`${url}/control/${what}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });

    const first = await start();
    expect((await post(first.obs!.url, 'pause')).status).toBe(200);
    await first.stop('test');

    const second = await start();
    try {
      expect(second.killSwitch.status().reasons).toEqual(['endpoint']);
      const metrics = await (await fetch(`${second.obs!.url}/metrics`)).text();
      expect(metrics).toContain('packbot_paused{reason="endpoint"} 1');
      expect(metrics).toContain('packbot_paused{reason="file"} 0');
      expect((await post(second.obs!.url, 'resume')).status).toBe(200);
      expect(await (await fetch(`${second.obs!.url}/metrics`)).text()).toContain(
        'packbot_paused{reason="endpoint"} 0',
      );
    } finally {
      await second.stop('test');
    }
    const third = await start();
    expect(third.killSwitch.isPaused()).toBe(false);
    await third.stop('test');
  });
});
