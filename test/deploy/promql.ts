/**
 * The metric names a PromQL expression reads, and the names a packbot exports, so the alert rules
 * and the Grafana dashboard can be checked against the exporter without a running Prometheus.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Metrics } from '../../src/obs/metrics.js';
import { ROOT } from '../e2e/helpers.js';

/** Series Prometheus makes itself: not the bot's to export. */
export const PROMETHEUS_SERIES = new Set(['up', 'ALERTS', 'ALERTS_FOR_STATE', 'scrape_duration_seconds']);

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/**
 * Metric names in `expr`: identifiers that are neither functions, aggregations, keywords, label
 * matchers, grouping labels, durations nor strings. Good enough for the expressions we write;
 * the rules themselves are parsed for real by `promtool check rules`.
 */
export function metricNames(expr: string): Set<string> {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // range and subquery durations
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = m[0];
    const after = stripped.slice(m.index + word.length).trimStart();
    if (after.startsWith('(')) continue; // a function or aggregation
    if (KEYWORDS.has(word.toLowerCase())) continue;
    const before = stripped.slice(0, m.index);
    if (/[0-9.]$/.test(before)) continue; // 1e3, 5m …
    names.add(word);
  }
  return names;
}

/** Every sample name an exposition text can have: the TYPE names, with a histogram's suffixes. */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram' || type === 'summary')
      for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`);
  }
  return names;
}

/** The names a bot exports, from its Metrics class (the same registry `/metrics` serves). */
export async function botMetricNames(): Promise<Set<string>> {
  return exportedNames(await new Metrics().text());
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export const ALERTS_PATH = join(ROOT, 'deploy/prometheus/alerts.yml');
export const ALERTS_TEST_PATH = join(ROOT, 'deploy/prometheus/alerts.test.yml');

export function alertRules(): AlertRule[] {
  const doc = parse(readFileSync(ALERTS_PATH, 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}
