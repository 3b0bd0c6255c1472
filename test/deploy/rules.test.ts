/**
 * The alert rules and the Grafana dashboard against the exporter, without Prometheus or Grafana
 * (Grafana is not packaged for Debian): every expression names only metrics the bot exports, every
 * alert has its annotations, a runbook section in docs/operations.md and a unit test that fires it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../e2e/helpers.js';
import { ALERTS_TEST_PATH, alertRules, botMetricNames, metricNames, PROMETHEUS_SERIES } from './promql.js';

let exported: Set<string>;
beforeAll(async () => {
  exported = await botMetricNames();
});

function unknownNames(expr: string): string[] {
  return [...metricNames(expr)].filter((n) => !exported.has(n) && !PROMETHEUS_SERIES.has(n));
}

/** GitHub's anchor of a markdown heading. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');

describe('alert rules (deploy/prometheus/alerts.yml)', () => {
  const rules = alertRules();

  it('the expression parser finds metric names and nothing else', () => {
    expect([
      ...metricNames(
        'histogram_quantile(0.95, sum by (job, le) (rate(a_bucket{status=~"5xx|429"}[10m]))) > 2 unless on (job) b == 0',
      ),
    ]).toEqual(['a_bucket', 'b']);
    expect([...metricNames('absent(up{job="packbot"})')]).toEqual(['up']);
  });

  it('has the alerts of the operations runbook, each name once', () => {
    const names = rules.map((r) => r.alert);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThanOrEqual(14);
  });

  it.each(alertRules().map((r) => [r.alert, r]))('%s reads only exported metrics', (_name, rule) => {
    expect(metricNames(rule.expr).size).toBeGreaterThan(0);
    expect(unknownNames(rule.expr)).toEqual([]);
  });

  it('every alert has a severity, a summary, a one-line runbook and a runbook section', () => {
    const ops = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const anchors = new Set([...ops.matchAll(/^#{2,4} (.+)$/gm)].map((m) => anchor(m[1]!)));
    for (const r of rules) {
      expect(['critical', 'warning', 'info'], r.alert).toContain(r.labels.severity);
      expect(r.annotations.summary, r.alert).toBeTruthy();
      expect(r.annotations.runbook, r.alert).toMatch(/^[^\n]{20,}$/);
      expect(r.annotations.runbook_url, r.alert).toBe(`docs/operations.md#${r.alert.toLowerCase()}`);
      expect(anchors, `docs/operations.md has no section for ${r.alert}`).toContain(r.alert.toLowerCase());
    }
  });

  it('every alert is fired by a unit test in alerts.test.yml, and seen quiet by one', () => {
    type Case = { alertname: string; exp_alerts?: unknown[] };
    const doc = parse(readFileSync(ALERTS_TEST_PATH, 'utf8')) as {
      rule_files: string[];
      tests: { alert_rule_test: Case[] }[];
    };
    expect(doc.rule_files).toEqual(['alerts.yml']);
    const cases = doc.tests.flatMap((t) => t.alert_rule_test);
    for (const r of rules) {
      const mine = cases.filter((c) => c.alertname === r.alert);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length > 0),
        `${r.alert} never fires in a test`,
      ).toBe(true);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length === 0),
        `${r.alert} never checked quiet`,
      ).toBe(true);
    }
  });
});

describe('Grafana (deploy/grafana)', () => {
  type Target = { expr: string; datasource?: { uid: string } };
  type Panel = { id: number; title: string; targets?: Target[]; datasource?: { uid: string } };
  const dashboard = JSON.parse(
    readFileSync(join(ROOT, 'deploy/grafana/dashboards/packbot.json'), 'utf8'),
  ) as { uid: string; title: string; panels: Panel[] };
  const datasources = parse(
    readFileSync(join(ROOT, 'deploy/grafana/provisioning/datasources/prometheus.yml'), 'utf8'),
  ) as { datasources: { uid: string; url: string }[] };

  it('the dashboard is a dashboard with unique panel ids, on the provisioned datasource', () => {
    expect(dashboard.uid).toBe('packbot');
    expect(dashboard.panels.length).toBeGreaterThan(10);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const uid = datasources.datasources[0]!.uid;
    expect(datasources.datasources[0]!.url).toBe('http://prometheus:9090');
    for (const p of dashboard.panels) {
      expect(p.datasource?.uid, p.title).toBe(uid);
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) expect(t.datasource?.uid, p.title).toBe(uid);
    }
  });

  it('every panel expression reads only exported metrics', () => {
    for (const p of dashboard.panels)
      for (const t of p.targets ?? []) {
        expect(metricNames(t.expr).size, `${p.title}: ${t.expr}`).toBeGreaterThan(0);
        expect(unknownNames(t.expr), `${p.title}: ${t.expr}`).toEqual([]);
      }
  });

  it('the dashboard provider loads the folder compose.yaml mounts', () => {
    const provider = parse(
      readFileSync(join(ROOT, 'deploy/grafana/provisioning/dashboards/packbot.yml'), 'utf8'),
    ) as { providers: { options: { path: string } }[] };
    const compose = readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8');
    expect(compose).toContain(`./grafana/dashboards:${provider.providers[0]!.options.path}:ro`);
  });
});
