import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { VirtualClock } from '../../src/core/clock.js';
import { startObservability } from '../../src/obs/setup.js';

const KEY = 'sk_live_abcdef123456';
const TOKEN = 'tok_abcdefghijklmnop';
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('startObservability', () => {
  it('wires config secrets into the log guard and serves metrics with no key anywhere', async () => {
    dir = mkdtempSync(join(tmpdir(), 'packbot-obs-'));
    mkdirSync(join(dir, 's'));
    writeFileSync(join(dir, 's', 'x.yaml'), 'format: packbot.strategy/v1\n');
    const path = join(dir, 'bot.yaml');
    writeFileSync(
      path,
      `format: packbot.config/v1\nmode: live\napi:\n  base_url: https://api.example.com\naccounts:\n  - name: main\n    strategy: s/x.yaml\nstore:\n  path: ${join(dir, 'ledger.db')}\ncontrol:\n  kill_switch_file: ${join(dir, 'pause')}\n  token_env: TOK\n`,
    );
    const config = loadBotConfig(path, { PARTNER_API_KEY: KEY, TOK: TOKEN });
    const lines: string[] = [];
    const destination = new Writable({
      write(c, _e, cb) {
        lines.push(String(c));
        cb();
      },
    });
    const obs = await startObservability({
      config,
      clock: new VirtualClock(0),
      ready: () => ({ ready: true }),
      destination,
      port: 0,
    });
    try {
      obs.logger.info({ config, weird: { nested: `Bearer ${KEY}` }, token: TOKEN }, `starting with ${KEY}`);
      const metrics = await (await fetch(`${obs.server!.url}/metrics`)).text();
      expect(metrics).toContain('packbot_paused{reason="endpoint"} 0');
      expect(metrics).not.toContain(KEY);
      const res = await fetch(`${obs.server!.url}/control/pause`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.status).toBe(200);
      expect(obs.killSwitch.isPaused()).toBe(true);
      expect(await (await fetch(`${obs.server!.url}/metrics`)).text()).toContain(
        'packbot_paused{reason="endpoint"} 1',
      );
    } finally {
      await obs.close();
    }
    const text = lines.join('');
    expect(text).toContain('starting with');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(TOKEN);
  });
});
