/**
 * `packbot doctor`: is everything in place for the bot to trade? Per account: the key's identity
 * and linked account (`GET /me`), its scopes against what the strategy needs (`scopesNeeded`),
 * limits and next purchase time, the service's clock against ours (its `Date` header); the
 * ledger's writer-lock holder, schema version and orders in doubt; whether the running bot's
 * metrics and control answer. Exit 0 when all is well, 1 with each problem named.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { embeddedStatePath } from '../bot/embedded.js';
import { type BotConfig, loadBotConfig } from '../config/bot-config.js';
import { UsageError } from '../core/errors.js';
import { textTable } from '../core/text-table.js';
import { Ledger } from '../store/ledger.js';
import { SCHEMA_VERSION } from '../store/migrations.js';
import { inDoubtFirst, isParked } from '../store/order-facts.js';
import { sharedBits } from '../store/private-files.js';
import { acquireWriterLock, LedgerLockedError, readLockHolder } from '../store/writer-lock.js';
import { missingScopes, scopesNeeded } from '../strategy/scopes.js';
import { parseFlags } from './args.js';
import type { Command } from './command.js';
import { botUp, botUrl, controlToken, openPartner } from './ops.js';

const USAGE = `packbot doctor [--config F] [--json]

  Checks each account's key (GET /me: linked, scopes the strategy needs), limits, the service's
  clock, the ledger (writer lock, schema version, orders in doubt) and the running bot's metrics
  and control. Exit 0 when all is well, 1 naming each problem.`;

/** Clock difference beyond which orders in doubt are judged on a shaky time line. */
const MAX_SKEW_MS = 5_000;

export interface Check {
  check: string;
  /** `ok`, `warn` (worth knowing, not a problem) or `problem`. */
  level: 'ok' | 'warn' | 'problem';
  detail: string;
}

async function accountChecks(config: BotConfig, out: Check[]): Promise<void> {
  for (const account of config.accounts) {
    const name = (what: string) => `${account.name}: ${what}`;
    if (account.apiKey() === '') {
      out.push({
        check: name('key'),
        level: 'problem',
        detail: `environment variable ${account.keyEnv} is not set`,
      });
      continue;
    }
    const partner = await openPartner(config, account).catch((e: unknown) => e as Error);
    if (partner instanceof Error) {
      out.push({ check: name('API'), level: 'problem', detail: partner.message });
      continue;
    }
    try {
      const me = await partner.api.getIdentity();
      out.push({
        check: name('identity'),
        level: me.linked ? 'ok' : 'problem',
        detail: me.linked
          ? `key '${me.key.name}' acts on ${me.account?.username ?? '?'} (${me.account?.id ?? '?'}) at ${partner.source}`
          : `key '${me.key.name}' is not linked to a user account`,
      });
      const missing = missingScopes(me.key.scopes, scopesNeeded(account.strategy, config.mode));
      out.push({
        check: name('scopes'),
        level: missing.required.length > 0 ? 'problem' : missing.optional.length > 0 ? 'warn' : 'ok',
        detail:
          missing.required.length > 0
            ? `the key lacks ${missing.required.join(', ')}, which strategy '${account.strategy.name}' needs (it has ${me.key.scopes.join(', ') || 'none'})`
            : missing.optional.length > 0
              ? `all required; lacks the optional ${missing.optional.join(', ')} (orders in doubt cannot be checked against the purchase report)`
              : `${me.key.scopes.join(', ')}`,
      });
      const a = await partner.api.getAccount();
      const l = a.limits;
      out.push({
        check: name('limits'),
        level: 'ok',
        detail: `balance ${a.balance} USD; ${l.packs_today}/${l.max_packs_per_day} packs today (resets ${l.resets_at}); next purchase ${l.next_purchase_at}`,
      });
      if (!config.api.embedded) {
        // The service's clock: its Date header against ours, halfway through the request.
        const sent = Date.now();
        const res = await fetch(`${partner.baseUrl.replace(/\/$/, '')}/api/partner/v1/me`, {
          headers: { authorization: `Bearer ${account.apiKey()}` },
          signal: AbortSignal.timeout(10_000),
        });
        // Only the Date header is wanted: the body is not read (nor buffered whole).
        await res.body?.cancel();
        const mid = (sent + Date.now()) / 2;
        const date = Date.parse(res.headers.get('date') ?? '');
        const skew = Number.isFinite(date) ? date - mid : Number.NaN;
        out.push({
          check: name('clock'),
          level: !Number.isFinite(skew) ? 'warn' : Math.abs(skew) > MAX_SKEW_MS ? 'problem' : 'ok',
          detail: Number.isFinite(skew)
            ? `the service's clock is ${(skew / 1000).toFixed(1)} s ${skew >= 0 ? 'ahead of' : 'behind'} ours (Date has 1 s resolution; limit ${MAX_SKEW_MS / 1000} s)`
            : 'the service sent no Date header',
        });
      }
    } catch (e) {
      out.push({ check: name('API'), level: 'problem', detail: e instanceof Error ? e.message : String(e) });
    } finally {
      await partner.close();
    }
  }
}

function ledgerChecks(config: BotConfig, out: Check[]): { locked: boolean } {
  const path = config.store.path;
  if (path === ':memory:' || !existsSync(path)) {
    out.push({
      check: 'ledger',
      level: 'ok',
      detail: `no ledger yet at ${path} (created at the first start)`,
    });
    return { locked: false };
  }
  let locked = false;
  try {
    acquireWriterLock(path).release();
    out.push({ check: 'writer lock', level: 'ok', detail: 'free: no bot runs on this ledger' });
  } catch (e) {
    if (!(e instanceof LedgerLockedError)) throw e;
    locked = true;
    const h = readLockHolder(path);
    out.push({
      check: 'writer lock',
      level: 'ok',
      detail: h
        ? `held by process ${h.pid} on ${h.host} since ${h.since}`
        : 'held by a process (holder unknown)',
    });
  }
  permissionChecks(path, out);
  const ledger = Ledger.open(path, { readonly: true });
  try {
    const v = ledger.schemaVersion();
    out.push({
      check: 'ledger schema',
      level: v === SCHEMA_VERSION ? 'ok' : 'problem',
      detail:
        v === SCHEMA_VERSION
          ? `version ${v} (current)`
          : v > SCHEMA_VERSION
            ? `version ${v} is newer than this packbot (${SCHEMA_VERSION}): upgrade packbot`
            : `version ${v}; the bot migrates it to ${SCHEMA_VERSION} at its next start`,
    });
    if (v < SCHEMA_VERSION) out[out.length - 1]!.level = 'warn';
    for (const a of config.accounts) feeCheck(ledger, a.name, a.strategy.sell.list.seller_fee_rate, out);
    const doubt = inDoubtFirst(ledger.unresolvedIntents());
    out.push({
      check: 'orders in doubt',
      level: doubt.length === 0 ? 'ok' : 'problem',
      detail:
        doubt.length === 0
          ? 'none'
          : `${doubt.length}: ${doubt.map((i) => `${i.key}${isParked(i) ? ' (parked)' : ''}`).join(', ')} (packbot orders --in-doubt)`,
    });
  } finally {
    ledger.close();
  }
  return { locked };
}

/** Sales whose fee is measured before a gap from the strategy's forecast is named. */
const FEE_SALES = 3;
/** A gap in the fee rate worth naming (half a point: 2.5 USD on a 500 USD sale). */
const FEE_GAP = 0.005;

/**
 * The marketplace fee the balance showed against the one the strategy assumes (`seller_fee_rate`,
 * which prices every listing decision): a gap means the strategy lists on a wrong forecast.
 */
function feeCheck(ledger: Ledger, account: string, assumed: number, out: Check[]): void {
  const t = ledger.listingFeeTotals(account);
  if (t.sales === 0) return;
  const measured = t.feeCents / t.priceCents;
  const pct = (r: number) => `${(r * 100).toFixed(2)}%`;
  const gap = t.sales >= FEE_SALES && Math.abs(measured - assumed) > FEE_GAP;
  out.push({
    check: `${account}: marketplace fee`,
    level: gap ? 'warn' : 'ok',
    detail: gap
      ? `the marketplace kept ${pct(measured)} of ${t.sales} sale(s); the strategy assumes ${pct(assumed)} ` +
        `(sell.list.seller_fee_rate): set it to ${measured.toFixed(3)} so listing decisions price the real fee`
      : `${pct(measured)} over ${t.sales} sale(s) (the strategy assumes ${pct(assumed)})`,
  });
}

const octal = (mode: number) => `0${mode.toString(8).padStart(3, '0')}`;

/**
 * The books are private (docs/security.md): a ledger file others can read is a problem; a store
 * directory others can enter is worth knowing (packbot creates it 0700, but leaves an existing one).
 */
function permissionChecks(ledgerPath: string, out: Check[]): void {
  const files = [
    ledgerPath,
    `${ledgerPath}-wal`,
    `${ledgerPath}-shm`,
    `${ledgerPath}.paused`,
    embeddedStatePath(ledgerPath),
  ].filter((f) => sharedBits(f) !== 0);
  out.push({
    check: 'ledger permissions',
    level: files.length === 0 ? 'ok' : 'problem',
    detail:
      files.length === 0
        ? 'the ledger and its files are private (0600)'
        : `readable by others: ${files.map((f) => `${f} (group/other bits ${octal(sharedBits(f))})`).join(', ')}; the bot tightens them at its next start, or run chmod 600 on them`,
  });
  const dir = dirname(ledgerPath);
  if (sharedBits(dir) !== 0)
    out.push({
      check: 'store directory',
      level: 'warn',
      detail: `${dir} is open to group/others (bits ${octal(sharedBits(dir))}): chmod 700 ${dir} unless it is shared on purpose`,
    });
}

async function serverChecks(config: BotConfig, locked: boolean, out: Check[]): Promise<void> {
  if (!config.metrics.enabled) {
    out.push({
      check: 'metrics',
      level: 'warn',
      detail: 'metrics.enabled is false: no metrics, dashboard or control',
    });
    return;
  }
  const url = botUrl(config);
  if (!(await botUp(config))) {
    out.push({
      check: 'metrics',
      level: locked ? 'problem' : 'ok',
      detail: locked
        ? `the bot holds the ledger but ${url}/healthz does not answer`
        : `the bot is not running (nothing answers at ${url})`,
    });
    return;
  }
  const metricsToken = config.metrics.token();
  const metrics = await fetch(`${url}/metrics`, {
    headers: metricsToken ? { authorization: `Bearer ${metricsToken}` } : {},
    signal: AbortSignal.timeout(5000),
  });
  const text = await metrics.text();
  out.push({
    check: 'metrics',
    level: metrics.ok && text.includes('packbot_') ? 'ok' : 'problem',
    detail: metrics.ok ? `${url}/metrics answers` : `${url}/metrics: HTTP ${metrics.status}`,
  });
  const token = controlToken(config);
  if (!token) {
    out.push({
      check: 'control',
      level: 'warn',
      detail: 'no control.token_env: the bot cannot be paused or steered through its API',
    });
    return;
  }
  // A control call without a reason is refused (400) only once the token is accepted: harmless.
  const res = await fetch(`${url}/api/v1/control/pause`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
    signal: AbortSignal.timeout(5000),
  });
  out.push({
    check: 'control',
    level: res.status === 400 ? 'ok' : 'problem',
    detail:
      res.status === 400
        ? `${url}/api/v1/control/ answers and accepts the token`
        : res.status === 401
          ? 'the running bot refuses this token (another control.token_env value?)'
          : `${url}/api/v1/control/pause: HTTP ${res.status}`,
  });
}

function renderChecks(checks: readonly Check[]): string {
  const mark = { ok: 'ok  ', warn: 'warn', problem: 'FAIL' };
  const lines = textTable(
    null,
    checks.map((c) => [mark[c.level], c.check, c.detail]),
    { freeLast: true, trim: false },
  );
  const problems = checks.filter((c) => c.level === 'problem').length;
  lines.push('', problems === 0 ? 'All is well.' : `${problems} problem(s).`);
  return `${lines.join('\n')}\n`;
}

export const command: Command = {
  summary: 'check key, scopes, limits, clock, ledger, metrics and control',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      { config: { type: 'string' }, json: { type: 'boolean' } },
      'doctor',
    );
    if (positionals.length > 0) throw new UsageError(`doctor: unexpected argument '${positionals[0]}'`);
    const config = loadBotConfig(values.config ?? 'config/bot.yaml', process.env, { ignoreEnv: true });
    const checks: Check[] = [];
    await accountChecks(config, checks);
    const { locked } = ledgerChecks(config, checks);
    await serverChecks(config, locked, checks);
    const ok = checks.every((c) => c.level !== 'problem');
    process.stdout.write(values.json ? `${JSON.stringify({ ok, checks }, null, 2)}\n` : renderChecks(checks));
    return ok ? 0 : 1;
  },
};
