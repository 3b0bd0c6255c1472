/**
 * `packbot calibrate --config F --snapshots DIR --out dynamics.yaml [--json F]`: the world's
 * dynamics fitted to what the API shows (src/backtest/calibrate/): a snapshot series (packbot
 * record), the purchase report over its span (read with the config's key), and the config's
 * ledger (our own report user id, our listings). Writes a world file that extends the default
 * world with the fitted `dynamics`, which `packbot backtest --dynamics` and `packbot sim --world`
 * take.
 */
import { existsSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isPartnerApiError } from '../api/errors.js';
import { iterPurchaseReport } from '../api/paginate.js';
import type { PurchaseReportRow } from '../api/schemas.js';
import type { SnapshotFile } from '../api/snapshot-schema.js';
import { type Calibration, calibrate, ESTIMATED } from '../backtest/calibrate/calibrate.js';
import { type ListingHistory, segmentsOf } from '../backtest/calibrate/fills.js';
import { loadSnapshot } from '../backtest/snapshot/load.js';
import { USER_ID_FACT } from '../bot/doubt/in-doubt.js';
import { type BotConfig, loadBotConfig } from '../config/bot-config.js';
import { type Clock, iso, WallClock } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import { textTable } from '../core/text-table.js';
import { DynamicsSpec } from '../market/world-schema.js';
import { Ledger } from '../store/ledger.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import { connect } from './connect.js';

const USAGE = 'packbot calibrate --config F --snapshots DIR --out dynamics.yaml [--json F]';
/** The report refuses windows over 31 days: the span is read in 30-day windows. */
const WINDOW_MS = 30 * 86_400_000;

/** Every snapshot file in DIR (each validated; a bad one is named), oldest first. */
function loadSeries(dir: string): SnapshotFile[] {
  if (!existsSync(dir)) throw new UsageError(`--snapshots: no such directory: ${dir}`);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const series = files.map((f) => loadSnapshot(join(dir, f)));
  if (series.length < 2)
    throw new UsageError(
      `${dir}: ${series.length} snapshot(s); calibration needs at least two (packbot record)`,
    );
  return series.sort((a, b) => Date.parse(a.taken_at) - Date.parse(b.taken_at));
}

/** The purchase report over [since, until] (server time), or null when the key may not read it. */
async function readReport(
  config: BotConfig,
  since: string,
  until: string,
): Promise<PurchaseReportRow[] | null> {
  const local = new WallClock();
  const { api, close } = await connect(config, local);
  try {
    await api.getIdentity(); // learns the server's time from its Date header
    const serverClock: Clock = {
      now: () => api.serverNow() ?? local.now(),
      sleep: (ms, s) => local.sleep(ms, s),
    };
    const rows: PurchaseReportRow[] = [];
    const end = Math.min(Date.parse(until), serverClock.now());
    for (let from = Date.parse(since); from < end; from += WINDOW_MS) {
      const to = Math.min(end, from + WINDOW_MS);
      const query = { since: iso(from), until: iso(to), per_page: 1000 };
      for await (const r of iterPurchaseReport(api, query, serverClock)) rows.push(r);
    }
    return rows;
  } catch (e) {
    if (isPartnerApiError(e) && e.status === 403) return null;
    throw e;
  } finally {
    await close();
  }
}

/** Our report user ids and listings, from the config's ledger when there is one. */
function fromLedger(config: BotConfig): { own: Set<string>; listings: ListingHistory[] } {
  const own = new Set<string>();
  const listings: ListingHistory[] = [];
  const path = config.store.path;
  if (path === ':memory:' || !existsSync(path)) return { own, listings };
  const ledger = Ledger.open(path, { readonly: true });
  try {
    for (const a of config.accounts) {
      const id = ledger.accountFact(a.name, USER_ID_FACT);
      if (id !== undefined) own.add(id);
    }
    const now = Date.now();
    for (const l of ledger.listingHistories()) {
      if (l.value_cents === null || l.prices.length === 0) continue;
      const end = l.filled_at ?? l.delisted_at ?? now;
      const segments = segmentsOf(l.value_cents, l.prices, end);
      if (segments.length) listings.push({ segments, sold: l.state === 'filled' });
    }
  } finally {
    ledger.close();
  }
  return { own, listings };
}

const num = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(1) : x.toPrecision(4));

function dynamicsYaml(c: Calibration, source: string): string {
  const lines = [
    `# Fitted by packbot calibrate from ${c.span.snapshots} snapshots in ${source}`,
    `# (${c.span.since} to ${c.span.until}). Fields without data keep the defaults and say why.`,
    'format: packbot.world/v1',
    'extends: default # the shipped world (config/sim.yaml) with these dynamics',
    'dynamics:',
  ];
  for (const f of ESTIMATED) {
    const se = c.stderr[f];
    const why = c.defaulted[f];
    const note = why ? `default: ${why}` : `± ${se === undefined ? '?' : num(se)} (${c.samples[f]} samples)`;
    lines.push(`  ${f}: ${Number(c.dynamics[f].toPrecision(6))} # ${note}`);
  }
  return `${lines.join('\n')}\n`;
}

function table(c: Calibration): string {
  const defaults = DynamicsSpec.parse({});
  const rows = ESTIMATED.map((f) => {
    const why = c.defaulted[f];
    const se = c.stderr[f];
    return [
      f,
      why ? '-' : `${num(c.dynamics[f])} ± ${se === undefined ? '?' : num(se)}`,
      String(c.samples[f]),
      String(defaults[f]),
      why ? `kept the default: ${why}` : '',
    ];
  });
  const head = ['field', 'estimate', 'samples', 'default', 'note'];
  const out = [
    `calibration over ${c.span.snapshots} snapshots, ${c.span.since} to ${c.span.until}`,
    '',
    ...textTable(head, rows, { freeLast: true }),
  ];
  if (c.openings)
    out.push(
      '',
      `others' openings: ${c.openings.rows} report rows${c.openings.own ? `, ${c.openings.own} of ours left out` : ' (none of ours known: our report user id is learnt by the bot)'}; scaled for the free and internal openings the report omits (world defaults)`,
      `  busiest packs: ${c.openings.shares
        .slice(0, 6)
        .map((s) => `${s.pack} ${(100 * s.share).toFixed(1)}%`)
        .join(', ')}`,
    );
  if (c.value_by_category.length)
    out.push(
      `value volatility by category: ${c.value_by_category.map((v) => `${v.category} ${num(v.volatility)}`).join(', ')}`,
    );
  if (c.chases_gone.length)
    out.push(`chases gone: ${c.chases_gone.map((x) => `${x.pack} at ${x.at}`).join(', ')}`);
  const h = c.held_out;
  if (h) {
    out.push(
      '',
      `held-out check: fitted on ${h.fit.snapshots} snapshots, predicting the last ${h.test.snapshots}`,
    );
    if (h.openings.length) {
      const total = h.openings.reduce((a, o) => [a[0]! + o.predicted, a[1]! + o.observed], [0, 0]);
      out.push(`  openings: predicted ${total[0]!.toFixed(0)}, observed ${total[1]}`);
      for (const o of h.openings.slice(0, 5))
        out.push(`    ${o.pack}: predicted ${o.predicted.toFixed(1)}, observed ${o.observed}`);
    }
    const cl = h.cards_left;
    if (cl.bands)
      out.push(
        `  cards left at the end: predicted ${cl.predicted.toFixed(0)}, observed ${cl.observed} over ${cl.bands} bands (mean |error| ${cl.mean_abs_error.toFixed(1)} cards a band)`,
      );
    for (const p of h.price_moves)
      out.push(
        `  ${p.category} value moves: predicted sd ${num(p.predicted_sd)}, observed ${num(p.observed_sd)} (${p.moves} moves)`,
      );
  }
  return `${out.join('\n')}\n`;
}

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export const command: Command = {
  summary: 'fit the world dynamics to a snapshot series and the purchase report',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        config: { type: 'string' },
        snapshots: { type: 'string' },
        out: { type: 'string' },
        json: { type: 'string' },
      },
      'calibrate',
    );
    if (positionals.length > 0)
      throw new UsageError(`calibrate: unexpected argument '${positionals[0]}' (${USAGE})`);
    if (!values.snapshots) throw new UsageError(`calibrate: --snapshots DIR is required (${USAGE})`);
    if (!values.out) throw new UsageError(`calibrate: --out F is required (${USAGE})`);
    const config = loadBotConfig(values.config ?? 'config/bot.yaml');
    const series = loadSeries(values.snapshots);
    const { own, listings } = fromLedger(config);
    const report = await readReport(config, series[0]!.taken_at, series[series.length - 1]!.taken_at);
    const result = calibrate({ series, report, ownUserIds: own, listings, defaults: DynamicsSpec.parse({}) });
    writeAtomic(values.out, dynamicsYaml(result, values.snapshots));
    if (values.json) writeAtomic(values.json, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(
      `${table(result)}\nwrote ${values.out}${values.json ? ` and ${values.json}` : ''}\n`,
    );
    return 0;
  },
};
