import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { BotConfigFile, configPathOf, storePathOf } from '../../src/config/bot-config.js';
import { StrategyFile } from '../../src/strategy/strategy-schema.js';
import { type Doc, KUBECTL, loadDocs } from './manifests.js';

const DIR = 'deploy/k8s';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : f.endsWith('.yaml') ? [p] : [];
  });
}

const docs: Doc[] = files(DIR).flatMap((f) => loadDocs(readFileSync(f, 'utf8'), f));
const find = (kind: string, name: string): Doc => {
  const d = docs.find((x) => x.kind === kind && x.metadata?.name === name);
  expect(d, `${kind}/${name}`).toBeDefined();
  return d;
};

describe('deploy/k8s manifests', () => {
  it.skipIf(!KUBECTL)('parse with kubectl, offline (--local, client dry run)', () => {
    const out = execFileSync(
      KUBECTL!,
      ['label', '--local', '-R', '-f', DIR, 'check=1', '--dry-run=client', '-o', 'name'],
      {
        encoding: 'utf8',
      },
    );
    expect(out.trim().split('\n').sort()).toEqual(
      [
        'configmap/packbot-group-a',
        'job.batch/packbot-backtest',
        'job.batch/packbot-backtest-merge',
        'job.batch/packbot-optimize-merge',
        'job.batch/packbot-optimize-plan',
        'job.batch/packbot-optimize-rung',
        'persistentvolumeclaim/packbot-backtest-data',
        'persistentvolumeclaim/packbot-optimize-data',
        'secret/packbot-group-a-keys',
        'service/packbot-group-a',
        'statefulset.apps/packbot-group-a',
      ].sort(),
    );
  });
  if (!KUBECTL) it('kubectl is not installed: the offline kubectl check is skipped', () => {});

  it('the backtest is an Indexed Job of shards wired to --shard, merged by a second Job', () => {
    const job = find('Job', 'packbot-backtest');
    expect(job.spec.completionMode).toBe('Indexed');
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    const c = pod.containers[0];
    const env = Object.fromEntries(c.env.map((e: Doc) => [e.name, e]));
    expect(Number(env.SHARDS.value)).toBe(job.spec.completions);
    expect(env.SHARD_INDEX.valueFrom.fieldRef.fieldPath).toBe(
      "metadata.annotations['batch.kubernetes.io/job-completion-index']",
    );
    const cmd = c.args.join(' ');
    expect(cmd).toContain('packbot.js backtest');
    expect(cmd).toContain('--shard "$((SHARD_INDEX + 1))/$SHARDS"');
    expect(cmd).toContain('--json "/data/parts/part-$((SHARD_INDEX + 1)).json"');
    expect(Number(env.WORKERS.value)).toBe(Number(c.resources.requests.cpu));
    const merge = find('Job', 'packbot-backtest-merge');
    expect(merge.spec.template.spec.containers[0].args.join(' ')).toContain('merge /data/parts/part-*.json');
    const pvc = find('PersistentVolumeClaim', 'packbot-backtest-data');
    expect(pvc.spec.accessModes).toEqual(['ReadWriteMany']);
    for (const j of [job, merge]) {
      const t = j.spec.template.spec;
      expect(t.volumes[0].persistentVolumeClaim.claimName).toBe('packbot-backtest-data');
      expect(t.containers[0].volumeMounts[0]).toEqual({ name: t.volumes[0].name, mountPath: '/data' });
    }
  });

  it('the bot is a one-replica StatefulSet: ledger on a claim, config from a ConfigMap, key from a Secret', () => {
    const sts = find('StatefulSet', 'packbot-group-a');
    expect(sts.spec.replicas).toBe(1);
    expect(sts.spec.podManagementPolicy).toBe('OrderedReady');
    expect(find('Service', sts.spec.serviceName).spec.clusterIP).toBe('None');
    const pod = sts.spec.template.spec;
    const c = pod.containers[0];
    expect(sts.spec.selector.matchLabels).toEqual(sts.spec.template.metadata.labels);
    const mounts = Object.fromEntries(c.volumeMounts.map((m: Doc) => [m.name, m.mountPath]));
    expect(sts.spec.volumeClaimTemplates.map((v: Doc) => v.metadata.name)).toEqual(['ledger']);
    expect(sts.spec.volumeClaimTemplates[0].spec.accessModes).toEqual(['ReadWriteOnce']);
    expect(mounts.ledger).toBe('/app/data');
    const cmName = pod.volumes.find((v: Doc) => v.name === 'config').configMap.name;
    const cm = find('ConfigMap', cmName);
    expect(c.args).toEqual(['run', '--config', `${mounts.config}/bot.yaml`]);
    // The mounted files are valid packbot files; the ledger is on the claim; the key comes from the Secret.
    const bot = BotConfigFile.parse(parseYaml(cm.data['bot.yaml']));
    // Relative paths resolve against the config's directory (the read-only ConfigMap mount).
    const configFile = `${mounts.config}/bot.yaml`;
    expect(storePathOf(bot, configFile).startsWith(`${mounts.ledger}/`)).toBe(true);
    expect(configPathOf(configFile, bot.control.kill_switch_file).startsWith(`${mounts.ledger}/`)).toBe(true);
    expect(bot.metrics.host).toBe('0.0.0.0');
    for (const a of bot.accounts) {
      expect(cm.data[a.strategy], a.strategy).toBeDefined();
      StrategyFile.parse(parseYaml(cm.data[a.strategy]));
    }
    const secret = find('Secret', c.envFrom[0].secretRef.name);
    expect(Object.keys(secret.stringData)).toContain(bot.api.key_env);
    expect(c.readinessProbe.httpGet.port).toBe('metrics');
    expect(c.ports[0].containerPort).toBe(bot.metrics.port);
  });
});
