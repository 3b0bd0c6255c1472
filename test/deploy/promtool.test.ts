/**
 * The stack's config files through the real programs: `promtool check config`, `promtool check
 * rules`, `promtool test rules` (the alerts' unit tests) and `amtool check-config`. Each is skipped,
 * with a message, when its program is not on PATH; in CI (`CI=true`, where `.ci/run` installs them
 * on Debian) the file fails instead.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/helpers.js';
import { requireProgram, run } from './programs.js';

const promtool = requireProgram('promtool', 'the promtool checks of deploy/prometheus');
const amtool = requireProgram('amtool', 'amtool check-config of deploy/alertmanager');
const deploy = (p: string) => join(ROOT, 'deploy', p);

describe('promtool', () => {
  it.skipIf(!promtool)('check config: prometheus.yml and the rule files it names', async () => {
    const r = await run(promtool!, ['check', 'config', deploy('prometheus/prometheus.yml')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('1 rule files found');
  });

  it.skipIf(!promtool)('check rules: alerts.yml', async () => {
    const r = await run(promtool!, ['check', 'rules', deploy('prometheus/alerts.yml')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it.skipIf(!promtool)(
    'test rules: every alert fires in its unit test and a healthy bot raises none',
    async () => {
      const r = await run(promtool!, ['test', 'rules', deploy('prometheus/alerts.test.yml')]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('SUCCESS');
    },
  );
});

describe('amtool', () => {
  it.skipIf(!amtool)('check-config: alertmanager.yml', async () => {
    const r = await run(amtool!, ['check-config', deploy('alertmanager/alertmanager.yml')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('SUCCESS');
  });
});
