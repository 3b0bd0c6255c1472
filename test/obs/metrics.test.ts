import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/api/partner-api.js';
import {
  DROPPED_DEFAULT_METRICS,
  endpointLabel,
  MAX_PACK_TYPES,
  Metrics,
  statusLabel,
} from '../../src/obs/metrics.js';

/** DESIGN.md's list, verbatim: the exporter must show every one of these. */
const DESIGN_METRICS = [
  'packs_opened_total',
  'spend_usd_total',
  'sellback_payout_usd_total',
  'balance_usd',
  'packs_left_today',
  'pack_ev_ratio',
  'api_requests_total',
  'api_request_duration_seconds',
  'sellback_window_missed_total',
  'decision_latency_seconds',
  'listings_active',
  'orders_in_doubt',
];

function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || l === `${name}${labels}`);
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('Metrics', () => {
  it('exposes every DESIGN.md metric with HELP and TYPE, plus process metrics', async () => {
    const text = await new Metrics().text();
    for (const m of DESIGN_METRICS) {
      expect(text, m).toMatch(new RegExp(`# HELP packbot_${m} `));
      expect(text, m).toMatch(new RegExp(`# TYPE packbot_${m} (counter|gauge|histogram)`));
    }
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_heap_size_total_bytes');
  });

  it('exports no gauge with a counter suffix (promtool check metrics); the by-type gauges stay', async () => {
    const text = await new Metrics().text();
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(types.length).toBeGreaterThan(20);
    for (const [name, type] of types) if (name.endsWith('_total')) expect(type, name).toBe('counter');
    for (const name of DROPPED_DEFAULT_METRICS) expect(text).not.toContain(name);
    expect(text).toContain('# TYPE nodejs_active_handles gauge');
    expect(text).toContain('# TYPE nodejs_active_requests gauge');
  });

  it('two instances do not share a registry', async () => {
    const a = new Metrics({ defaultMetrics: false }).forAccount('main');
    const b = new Metrics({ defaultMetrics: false }).forAccount('main');
    a.spend(150);
    expect(sample(await a.text(), 'packbot_spend_usd_total', '{account="main"}')).toBe(1.5);
    expect(sample(await b.text(), 'packbot_spend_usd_total', '{account="main"}')).toBe(0);
  });

  it('writes account-scoped series per account through forAccount; process-wide ones without', async () => {
    const m = new Metrics({ defaultMetrics: false });
    const main = m.forAccount('main');
    const alt = m.forAccount('alt');
    main.balance(1_000_00);
    alt.balance(250_50);
    main.spend(500);
    main.packsOpened('pokemon', 'x', 'standard', 2);
    alt.paused('stop_loss', true);
    m.paused('file', true);
    main.apiRequest('getAccount', 200, 0.1);
    const text = await m.text();
    expect(text).toContain('packbot_balance_usd{account="main"} 1000');
    expect(text).toContain('packbot_balance_usd{account="alt"} 250.5');
    expect(text).toContain('packbot_spend_usd_total{account="main"} 5');
    expect(text).toContain('packbot_spend_usd_total{account="alt"} 0');
    expect(text).toContain('packbot_sellback_window_missed_total{account="alt"} 0');
    expect(text).toContain(
      'packbot_packs_opened_total{category="pokemon",pack_type="other",risk_level="standard",account="main"} 2',
    );
    expect(text).toContain('packbot_paused{reason="stop_loss",account="alt"} 1');
    expect(text).toContain('packbot_paused{reason="stop_loss",account="main"} 0');
    expect(text).toContain('packbot_paused{reason="file"} 1');
    expect(text).toContain('packbot_api_requests_total{endpoint="GET /account",status="2xx"} 1');
  });

  it('records money in USD from cents and counters add up', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.spend(1999);
    m.spend(1);
    m.sellbackPayout(1111);
    m.sellbackPayout(0);
    m.balance(-250);
    m.packsLeftToday(42);
    m.listingsActive(3);
    m.ordersInDoubt(1);
    m.sellbackWindowMissed();
    m.reconcileDrift(-5, 2);
    m.paused('stop_loss', true);
    m.budgetLimits({ minBalanceUsd: 100, dailyCapUsd: 500, totalCapUsd: 5000 });
    m.budgetSpent(45_050, 123_456);
    const t = await m.text();
    expect(sample(t, 'packbot_budget_min_balance_usd')).toBe(100);
    expect(sample(t, 'packbot_budget_spend_cap_usd', '{period="day"}')).toBe(500);
    expect(sample(t, 'packbot_budget_spend_cap_usd', '{period="total"}')).toBe(5000);
    expect(sample(t, 'packbot_budget_spent_usd', '{period="day"}')).toBe(450.5);
    expect(sample(t, 'packbot_budget_spent_usd', '{period="total"}')).toBe(1234.56);
    expect(sample(t, 'packbot_spend_usd_total')).toBe(20);
    expect(sample(t, 'packbot_sellback_payout_usd_total')).toBe(11.11);
    expect(sample(t, 'packbot_balance_usd')).toBe(-2.5);
    expect(sample(t, 'packbot_packs_left_today')).toBe(42);
    expect(sample(t, 'packbot_listings_active')).toBe(3);
    expect(sample(t, 'packbot_orders_in_doubt')).toBe(1);
    expect(sample(t, 'packbot_sellback_window_missed_total')).toBe(1);
    expect(sample(t, 'packbot_reconcile_balance_drift_usd')).toBe(-0.05);
    expect(sample(t, 'packbot_reconcile_vault_drift_cards')).toBe(2);
    expect(sample(t, 'packbot_paused', '{reason="stop_loss"}')).toBe(1);
    expect(sample(t, 'packbot_paused', '{reason="file"}')).toBe(0);
    expect(sample(t, 'packbot_paused', '{reason="endpoint"}')).toBe(0);
  });

  it('labels packs only from fixed sets; unknown values become other', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.setKnownPackTypes(['starter', 'elite']);
    m.packsOpened('pokemon', 'starter', 'aggressive', 3);
    m.packsOpened('pokemon', 'card-uuid-1234', 'chill', 1);
    m.packsOpened('<script>', 'elite', 'insane', 2);
    m.packEv('sports', 'elite', 'standard', 1.07);
    m.packEv('sports', 'elite', 'standard', Number.NaN);
    const t = await m.text();
    expect(
      sample(
        t,
        'packbot_packs_opened_total',
        '{category="pokemon",pack_type="starter",risk_level="aggressive"}',
      ),
    ).toBe(3);
    expect(
      sample(t, 'packbot_packs_opened_total', '{category="pokemon",pack_type="other",risk_level="chill"}'),
    ).toBe(1);
    expect(
      sample(t, 'packbot_packs_opened_total', '{category="other",pack_type="elite",risk_level="other"}'),
    ).toBe(2);
    expect(
      sample(t, 'packbot_pack_ev_ratio', '{category="sports",pack_type="elite",risk_level="standard"}'),
    ).toBe(1.07);
    expect(t).not.toContain('card-uuid-1234');
    expect(t).not.toContain('script');
  });

  it('caps the number of pack type labels', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.setKnownPackTypes(Array.from({ length: MAX_PACK_TYPES + 50 }, (_, i) => `p${i}`));
    m.packsOpened('pokemon', `p${MAX_PACK_TYPES + 10}`, 'chill', 1);
    m.packsOpened('pokemon', 'p0', 'chill', 1);
    const t = await m.text();
    expect(t).toContain('pack_type="other"');
    expect(t).toContain('pack_type="p0"');
  });

  it('labels API requests by endpoint and status class', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.apiRequest('purchasePacks', 200, 0.12);
    m.apiRequest('POST /packs/purchase', 429, 0.01);
    m.apiRequest('getVault', 'transport', 5);
    m.apiRequest('GET /secret/abc123', 200, 0.1);
    const t = await m.text();
    expect(sample(t, 'packbot_api_requests_total', '{endpoint="POST /packs/purchase",status="2xx"}')).toBe(1);
    expect(sample(t, 'packbot_api_requests_total', '{endpoint="POST /packs/purchase",status="429"}')).toBe(1);
    expect(sample(t, 'packbot_api_requests_total', '{endpoint="GET /vault",status="transport"}')).toBe(1);
    expect(sample(t, 'packbot_api_requests_total', '{endpoint="other",status="2xx"}')).toBe(1);
    expect(sample(t, 'packbot_api_request_duration_seconds_count', '{endpoint="POST /packs/purchase"}')).toBe(
      2,
    );
    expect(t).not.toContain('abc123');
  });

  it('maps labels exhaustively', () => {
    for (const [op, ep] of Object.entries(ENDPOINTS)) {
      expect(endpointLabel(op)).toBe(ep);
      expect(endpointLabel(ep)).toBe(ep);
    }
    expect([
      statusLabel(204),
      statusLabel(302),
      statusLabel(404),
      statusLabel(429),
      statusLabel(503),
    ]).toEqual(['2xx', '3xx', '4xx', '429', '5xx']);
    expect([statusLabel(undefined), statusLabel(99), statusLabel(700)]).toEqual([
      'transport',
      'other',
      'other',
    ]);
  });

  it('measures decision latency in seconds from clock milliseconds', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.decisionLatency(4);
    m.decisionLatency(40);
    m.decisionLatency(-1);
    const t = await m.text();
    expect(sample(t, 'packbot_decision_latency_seconds_count')).toBe(2);
    expect(sample(t, 'packbot_decision_latency_seconds_bucket', '{le="0.005"}')).toBe(1);
    expect(sample(t, 'packbot_decision_latency_seconds_sum')).toBeCloseTo(0.044);
  });
});
