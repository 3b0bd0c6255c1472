/**
 * deploy/compose.yaml as far as it can be checked without a container engine: it parses, wires
 * the four services, declares its volumes, mounts only files that exist, and the bot's mounted
 * config is valid where the image puts it (/app/config, beside the shipped strategies and world).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { ROOT, removeTempDirs, tempDir } from '../e2e/helpers.js';

afterEach(removeTempDirs);

const DEPLOY = join(ROOT, 'deploy');

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  command?: string[];
  depends_on?: string[];
}
const compose = parse(readFileSync(join(DEPLOY, 'compose.yaml'), 'utf8')) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};

describe('deploy/compose.yaml', () => {
  it('runs packbot, prometheus, alertmanager and grafana; only the bot is built', () => {
    const { services } = compose;
    expect(Object.keys(services).sort()).toEqual(['alertmanager', 'grafana', 'packbot', 'prometheus']);
    const build = services.packbot!.build!;
    expect(existsSync(join(resolve(DEPLOY, build.context), build.dockerfile))).toBe(true);
    expect(services.prometheus!.image).toMatch(/^prom\/prometheus:v\d/);
    expect(services.alertmanager!.image).toMatch(/^prom\/alertmanager:v\d/);
    expect(services.grafana!.image).toMatch(/^grafana\/grafana:\d/);
  });

  it('mounts only files and folders that exist, and declares every named volume', () => {
    const named = new Set<string>();
    for (const [name, s] of Object.entries(compose.services))
      for (const v of s.volumes ?? []) {
        const [source, target] = v.split(':');
        expect(target, `${name}: ${v}`).toMatch(/^\//);
        if (source!.startsWith('.')) expect(existsSync(resolve(DEPLOY, source!)), `${name}: ${v}`).toBe(true);
        else named.add(source!);
      }
    expect([...named].sort()).toEqual(Object.keys(compose.volumes).sort());
    // The ledger lives on a volume, where the config's `../data` puts it (next test).
    expect(compose.services.packbot!.volumes).toContain('packbot-data:/app/data');
  });

  it('publishes ports on loopback only and wires the services by name', () => {
    for (const [name, s] of Object.entries(compose.services))
      for (const p of s.ports ?? []) expect(p, name).toMatch(/^127\.0\.0\.1:/);
    const prom = parse(readFileSync(join(DEPLOY, 'prometheus/prometheus.yml'), 'utf8')) as {
      rule_files: string[];
      alerting: { alertmanagers: { static_configs: { targets: string[] }[] }[] };
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    expect(prom.rule_files).toEqual(['alerts.yml']);
    expect(prom.alerting.alertmanagers[0]!.static_configs[0]!.targets).toEqual(['alertmanager:9093']);
    const job = prom.scrape_configs.find((j) => j.job_name === 'packbot');
    expect(job?.static_configs.flatMap((c) => c.targets)).toEqual(['packbot:9464']);
    expect(compose.services.prometheus!.volumes).toContain('./prometheus:/etc/prometheus:ro');
  });

  it('passes the API key from the environment, never a value', () => {
    const bot = readFileSync(join(DEPLOY, 'packbot/bot.yaml'), 'utf8');
    const keyEnv = /key_env: (\w+)/.exec(bot)![1]!;
    expect(compose.services.packbot!.environment![keyEnv]).toBe(`\${${keyEnv}:-}`);
    expect(readFileSync(join(DEPLOY, 'compose.yaml'), 'utf8')).not.toMatch(/sk_(live|sim)_\w+/);
  });

  it("the bot's config is valid where compose mounts it, with metrics on all interfaces", () => {
    const mount = compose.services.packbot!.volumes!.find((v) => v.endsWith(':/app/config/bot.yaml:ro'));
    expect(mount).toBe('./packbot/bot.yaml:/app/config/bot.yaml:ro');
    // /app as the image lays it out: config/ (with the world), strategies/.
    const app = tempDir('packbot-compose-');
    mkdirSync(join(app, 'config'));
    cpSync(join(ROOT, 'config/sim.yaml'), join(app, 'config/sim.yaml'));
    symlinkSync(join(ROOT, 'strategies'), join(app, 'strategies'));
    const path = join(app, 'config/bot.yaml');
    cpSync(join(DEPLOY, 'packbot/bot.yaml'), path);
    const config = loadBotConfig(path, {});
    expect(config.metrics).toMatchObject({ enabled: true, host: '0.0.0.0', port: 9464 });
    // Prometheus's target name is one the bot answers to (any other Host gets 421).
    expect(config.metrics.allowedHosts).toContain('packbot');
    expect(config.accounts[0]!.strategyPath).toBe(join(app, 'strategies/balanced.yaml'));
    expect(config.api.embedded).toBe(true);
    // Relative to the mounted config's directory: the packbot-data volume at /app/data.
    expect(config.store.path).toBe(join(app, 'data/packbot.db'));
    expect(config.control.killSwitchFile).toBe(join(app, 'data/packbot.pause'));
  });
});
