/**
 * docs/metrics.md in step with the exporter and the alert rules: one row per `packbot_` metric
 * the Metrics class registers, and in its last column exactly the alerts whose expression reads it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/helpers.js';
import { alertRules, botMetricNames, metricNames } from './promql.js';

const doc = readFileSync(join(ROOT, 'docs/metrics.md'), 'utf8');

/** metric → the alert names in its row's last column. */
function documented(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const m of doc.matchAll(/^\| `(packbot_[a-z_]+)[^`]*` \|.*\| ([^|]*) \|$/gm)) {
    const alerts = [...m[2]!.matchAll(/\[(\w+)\]\(operations\.md#(\w+)\)/g)].map((a) => {
      expect(a[2]).toBe(a[1]!.toLowerCase());
      return a[1]!;
    });
    rows.set(m[1]!, alerts.sort());
  }
  return rows;
}

let exported: Set<string>;
beforeAll(async () => {
  exported = await botMetricNames();
});

describe('docs/metrics.md', () => {
  it('has one row per packbot metric the exporter registers, and no other', () => {
    const base = [...exported].filter((n) => n.startsWith('packbot_') && !/_(bucket|sum|count)$/.test(n));
    expect([...documented().keys()].sort()).toEqual(base.sort());
  });

  it('names in each row exactly the alerts whose expression reads the metric', () => {
    const expected = new Map<string, string[]>();
    for (const rule of alertRules())
      for (const name of metricNames(rule.expr)) {
        const metric = name.replace(/_(bucket|sum|count)$/, '');
        const key = exported.has(metric) && metric.startsWith('packbot_') ? metric : name;
        expected.set(key, [...(expected.get(key) ?? []), rule.alert]);
      }
    for (const [metric, alerts] of documented())
      expect(alerts, metric).toEqual([...new Set(expected.get(metric) ?? [])].sort());
    for (const metric of expected.keys())
      if (metric.startsWith('packbot_')) expect(documented().has(metric), metric).toBe(true);
  });
});
