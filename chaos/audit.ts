/**
 * The audit: the simulator's books (its money ledger and the account's vault) against packbot's
 * ledger file, plus what the fault proxy saw of purchase answers, which ties each charge to the
 * bot's original idempotency key even when the bot never received the answer.
 */
import { Ledger } from '../src/store/ledger.js';
import type { SimLedgerEntry, SimVaultCard } from './sim-admin.js';

export interface AuditInput {
  ledgerPath: string;
  kills: number;
  simEntries: readonly SimLedgerEntry[];
  vault: readonly SimVaultCard[];
  modelProblems: readonly string[];
  /** checkout id → original key and pull ids, from the proxy. */
  seen: ReadonlyMap<string, { originalKey: string; pullIds: readonly string[] }>;
  caps: { dailyCents: number; totalCents: number };
  freshWindowMs: number;
  /** The simulator's time at the end of the run (epoch ms). */
  now: number;
}

export interface AuditResult {
  kills: number;
  orders: number;
  charges: number;
  doubleCharges: number;
  lostPulls: number;
  soldAtFresh: number;
  cardPulls: number;
  /** (ledger payouts − ledger charges) − (simulator payouts − simulator charges), in cents. */
  moneyDiffCents: number;
  capsKept: boolean;
  /** Everything that went wrong, one line each (empty on a clean run). */
  problems: string[];
  /** Facts worth printing that are not failures. */
  notes: string[];
  ok: boolean;
}

const PAYOUT_KINDS = new Set(['sell_back', 'listing_sale', 'seller_fee']);
const usd = (cents: number) => `${cents < 0 ? '-' : ''}$${(Math.abs(cents) / 100).toFixed(2)}`;

export function audit(input: AuditInput): AuditResult {
  const ledger = Ledger.open(input.ledgerPath, { readonly: true });
  try {
    return auditWith(ledger, input);
  } finally {
    ledger.close();
  }
}

function auditWith(ledger: Ledger, input: AuditInput): AuditResult {
  const problems: string[] = [];
  const notes: string[] = [];
  const data = ledger.reportData(0, Number.MAX_SAFE_INTEGER);
  const orderOf = new Map(data.orders.map((o) => [o.checkoutId, o]));
  // An order settled without its answer is `settled:<key>`; an extra charge of one intent is booked
  // under `<key>-x<n>`: both belong to the bot's original key.
  const baseKey = (intentKey: string) => intentKey.replace(/-x\d+$/, '');
  const ordersByKey = new Map<string, number>();
  for (const o of data.orders)
    ordersByKey.set(baseKey(o.intentKey), (ordersByKey.get(baseKey(o.intentKey)) ?? 0) + 1);

  // Charges: purchases the simulator did not refund, each tied to the bot's original key.
  const refunded = new Set(input.simEntries.filter((e) => e.kind === 'pack_refund').map((e) => e.ref));
  const charges = input.simEntries.filter((e) => e.kind === 'pack_purchase' && !refunded.has(e.ref));
  const byKey = new Map<string, string[]>();
  let doubleCharges = 0;
  for (const c of charges) {
    const key = input.seen.get(c.ref)?.originalKey ?? orderOf.get(c.ref)?.intentKey;
    if (key === undefined) {
      // Neither the simulator's orders nor the ledger can name its key: money spent on an order lost.
      doubleCharges++;
      problems.push(`charge ${c.ref} (${usd(-c.amountCents)}): no order in the ledger, key unknown`);
      continue;
    }
    byKey.set(key, [...(byKey.get(key) ?? []), c.ref]);
  }
  for (const [key, refs] of byKey) {
    // Paid more than once for one intended order, however the ledger booked it.
    if (refs.length > 1) {
      doubleCharges += refs.length - 1;
      problems.push(`intent ${key} charged ${refs.length} times: ${refs.join(', ')}`);
    }
    const booked = ordersByKey.get(key) ?? 0;
    if (booked !== refs.length)
      problems.push(`intent ${key}: charged ${refs.length} time(s), ${booked} order(s) in the ledger`);
  }
  for (const [key, n] of ordersByKey)
    if (!byKey.has(key))
      problems.push(`ledger has ${n} order(s) of intent ${key}, not charged by the simulator`);

  // Pulls: every pull the simulator handed out must be in the ledger, none left to rot in the vault.
  const pullOf = new Map(data.pulls.map((p) => [p.pullId, p]));
  const handed = new Set<string>();
  for (const c of charges) for (const id of input.seen.get(c.ref)?.pullIds ?? []) handed.add(id);
  for (const v of input.vault) if (v.pullId) handed.add(v.pullId);
  let lostPulls = 0;
  for (const id of handed)
    if (!pullOf.has(id)) {
      lostPulls++;
      problems.push(`pull ${id}: handed out by the simulator, not in the ledger`);
    }
  let inWindow = 0;
  for (const v of input.vault) {
    if (v.listed || v.kind !== 'card' || !v.pullId || !pullOf.has(v.pullId)) continue;
    const status = pullOf.get(v.pullId)!.status;
    if (status === 'held') continue;
    if (v.pulledAt !== null && input.now > v.pulledAt + input.freshWindowMs) {
      lostPulls++;
      problems.push(`pull ${v.pullId}: still in the vault past its 0.9 window (ledger: ${status})`);
    } else inWindow++;
  }
  if (inWindow > 0)
    notes.push(`${inWindow} pull(s) unsold and unlisted in the vault, still inside their 0.9 window`);

  // Money: both sides' charges and payouts.
  const ledgerCharges = data.orders.reduce((n, o) => n + o.totalChargedCents, 0);
  const simCharges = -input.simEntries
    .filter((e) => e.kind === 'pack_purchase' || e.kind === 'pack_refund')
    .reduce((n, e) => n + e.amountCents, 0);
  const ledgerPayouts =
    data.sellbacks.filter((s) => s.counted).reduce((n, s) => n + s.payoutCents, 0) +
    data.listings.reduce((n, l) => n + (l.proceedsCents ?? 0), 0);
  const simPayouts = input.simEntries
    .filter((e) => PAYOUT_KINDS.has(e.kind))
    .reduce((n, e) => n + e.amountCents, 0);
  const moneyDiffCents = ledgerPayouts - ledgerCharges - (simPayouts - simCharges);
  if (ledgerCharges !== simCharges)
    problems.push(`charges: ledger ${usd(ledgerCharges)}, simulator ${usd(simCharges)}`);
  if (ledgerPayouts !== simPayouts)
    problems.push(`payouts: ledger ${usd(ledgerPayouts)}, simulator ${usd(simPayouts)}`);

  const unresolved = ledger.unresolvedIntents();
  if (unresolved.length > 0)
    problems.push(
      `${unresolved.length} intent(s) still unresolved: ${unresolved.map((i) => `${i.key} (${i.state})`).join(', ')}`,
    );
  for (const p of input.modelProblems) problems.push(`simulator invariant: ${p}`);

  // Spend against the strategy's caps, per UTC day and in total, as the simulator charged it.
  let capsKept = true;
  const perDay = new Map<string, number>();
  for (const c of charges) {
    const day = new Date(c.at).toISOString().slice(0, 10);
    perDay.set(day, (perDay.get(day) ?? 0) - c.amountCents);
  }
  for (const [day, cents] of perDay)
    if (cents > input.caps.dailyCents) {
      capsKept = false;
      problems.push(`spend on ${day}: ${usd(cents)}, over the daily cap ${usd(input.caps.dailyCents)}`);
    }
  const total = [...perDay.values()].reduce((a, b) => a + b, 0);
  if (total > input.caps.totalCents) {
    capsKept = false;
    problems.push(`total spend ${usd(total)}, over the cap ${usd(input.caps.totalCents)}`);
  }
  notes.push(
    `spend ${usd(total)} of caps ${usd(input.caps.dailyCents)}/day, ${usd(input.caps.totalCents)} total`,
  );

  const books = moneyDiffCents === 0 && ledgerCharges === simCharges && ledgerPayouts === simPayouts;
  return {
    kills: input.kills,
    orders: data.orders.length,
    charges: charges.length,
    doubleCharges,
    lostPulls,
    soldAtFresh: data.sellbacks.filter((s) => s.counted && s.payoutRate === 0.9).length,
    cardPulls: data.pulls.filter((p) => p.kind === 'card').length,
    moneyDiffCents,
    capsKept,
    problems,
    notes,
    ok: doubleCharges === 0 && lostPulls === 0 && books && capsKept && problems.length === 0,
  };
}

/** The one summary line every run ends with. */
export function summaryLine(r: AuditResult): string {
  const books =
    r.moneyDiffCents === 0 ? 'ledger = simulator' : `ledger - simulator = ${r.moneyDiffCents} cents`;
  return `chaos: ${r.kills} kills, ${r.orders} orders, ${r.charges} charges, ${r.doubleCharges} double charges, ${r.lostPulls} lost pulls, ${r.soldAtFresh} sold at 0.9 of ${r.cardPulls}, ${books}`;
}
