import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { clientOptions } from '../../src/config/client-options.js';
import { VirtualClock } from '../../src/core/clock.js';
import { readSrc, srcFiles } from '../src-files.js';
import { removeTempDirs, tempDir } from '../temp-dirs.js';

afterEach(removeTempDirs);

function config(api: string) {
  const dir = tempDir('client-opts-');
  mkdirSync(join(dir, 'strategies'));
  writeFileSync(join(dir, 'strategies', 's.yaml'), 'format: packbot.strategy/v1\nname: s\n');
  const file = join(dir, 'bot.yaml');
  writeFileSync(
    file,
    `format: packbot.config/v1\nmode: live\napi:\n${api}accounts:\n  - name: main\n    strategy: strategies/s.yaml\n`,
  );
  return loadBotConfig(file, { PARTNER_API_KEY: 'sk_live_0123456789' });
}

describe('clientOptions', () => {
  it("gives every client the config's timeout (headers and whole attempt) and answer cap", () => {
    const c = config(
      '  base_url: https://partner.example.com\n  timeout_seconds: 120\n  max_response_mb: 2\n',
    );
    const clock = new VirtualClock(0);
    const o = clientOptions(c, c.accounts[0]!, clock);
    expect(o).toEqual({
      baseUrl: 'https://partner.example.com',
      apiKey: 'sk_live_0123456789',
      clock,
      timeouts: { requestMs: 120_000, headersMs: 120_000 },
      maxResponseBytes: 2 * 1024 * 1024,
    });
    expect(clientOptions(c, c.accounts[0]!, clock, 'http://127.0.0.1:9').baseUrl).toBe('http://127.0.0.1:9');
  });

  it('is how src/ builds every HTTP client of the Partner API (bot and commands alike)', () => {
    const bypass: string[] = [];
    for (const f of srcFiles()) {
      if (f.startsWith('api/')) continue;
      const lines = readSrc(f).split('\n');
      lines.forEach((line, i) => {
        if (!/createHttpClient\(/.test(line) || /^\s*(\/\/|\*|import)/.test(line)) return;
        if (!`${line}\n${lines[i + 1] ?? ''}`.includes('clientOptions(')) bypass.push(`src/${f}:${i + 1}`);
      });
    }
    expect(bypass, 'build the options with clientOptions (src/config/client-options.ts)').toEqual([]);
  });
});
