import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Doc, KUBECTL, loadDocs } from './manifests.js';

const DIR = 'deploy/k8s/optimize';

const manifest = (f: string): Doc => loadDocs(readFileSync(join(DIR, f), 'utf8'), f)[0];
const envOf = (c: Doc): Record<string, Doc> => Object.fromEntries(c.env.map((e: Doc) => [e.name, e]));
const script = (c: Doc): string => c.args.join(' ');

describe('deploy/k8s/optimize: the sharded search', () => {
  it('plans once, runs each rung as an Indexed Job of shards wired to --shard, merges with a second Job', () => {
    const pvc = manifest('pvc.yaml');
    expect(pvc.kind).toBe('PersistentVolumeClaim');
    expect(pvc.spec.accessModes).toEqual(['ReadWriteMany']);
    const plan = manifest('plan-job.yaml');
    const rung = manifest('rung-job.yaml');
    const merge = manifest('merge-job.yaml');
    for (const j of [plan, rung, merge]) {
      expect(j.kind).toBe('Job');
      const t = j.spec.template.spec;
      expect(t.restartPolicy).toBe('Never');
      expect(t.volumes[0].persistentVolumeClaim.claimName).toBe(pvc.metadata.name);
      expect(t.containers[0].volumeMounts[0]).toEqual({ name: t.volumes[0].name, mountPath: '/data' });
    }
    const planCmd = script(plan.spec.template.spec.containers[0]);
    expect(planCmd).toContain('packbot.js optimize --snapshot /data/in/snapshot.json');
    expect(planCmd).toContain('--plan /data/search');

    expect(rung.spec.completionMode).toBe('Indexed');
    const shard = rung.spec.template.spec.containers[0];
    const env = envOf(shard);
    expect(Number(env.SHARDS.value)).toBe(rung.spec.completions);
    expect(env.SHARD_INDEX.valueFrom.fieldRef.fieldPath).toBe(
      "metadata.annotations['batch.kubernetes.io/job-completion-index']",
    );
    expect(Number(env.WORKERS.value)).toBe(Number(shard.resources.requests.cpu));
    expect(env.RUNG.value).toBe('1');
    const cmd = script(shard);
    expect(cmd).toContain('packbot.js optimize --dir /data/search');
    expect(cmd).toContain('--rung "$RUNG" --shard "$((SHARD_INDEX + 1))/$SHARDS" --workers "$WORKERS"');
    // A step takes the search's settings from the plan's directory, never its own.
    for (const flag of ['--snapshot', '--paths', '--seed', '--trials']) expect(cmd).not.toContain(flag);

    const m = merge.spec.template.spec.containers[0];
    expect(envOf(m).RUNG.value).toBe('1');
    expect(script(m)).toContain(
      'packbot.js optimize --dir /data/search --merge-rung "$RUNG" --out /data/out',
    );
  });

  it.skipIf(!KUBECTL)("drive.sh prints a rung's two Jobs with RUNG set, offline", () => {
    const out = execFileSync('sh', [join(DIR, 'drive.sh'), 'print', '3'], { encoding: 'utf8' });
    const [rung, merge] = loadDocs(out, 'drive.sh print 3');
    expect(rung.metadata.name).toBe('packbot-optimize-rung');
    expect(envOf(rung.spec.template.spec.containers[0]).RUNG.value).toBe('3');
    expect(rung.spec.completionMode).toBe('Indexed');
    expect(merge.metadata.name).toBe('packbot-optimize-merge');
    expect(envOf(merge.spec.template.spec.containers[0]).RUNG.value).toBe('3');
  });
  if (!KUBECTL) it('kubectl is not installed: the drive.sh check is skipped', () => {});
});
