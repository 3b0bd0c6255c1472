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
  /**
   * Card sales: transaction id → the key that bought it, the card, and the card's pull id in the
   * vault (the world's `purchased_card_pull_id`: the transaction id, or another name), from the
   * simulator's orders.
   */
  cardSales?: ReadonlyMap<string, { originalKey: string; cardId: string; pullId?: string }>;
  caps: { dailyCents: number; totalCents: number };
  freshWindowMs: number;
  /** The simulator's time at the end of the run (epoch ms). */
  now: number;
}

export interface AuditResult {
  kills: number;
  orders: number;
  /** Card orders in the ledger (of `orders`). */
  cardOrders: number;
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
const CHARGE_KINDS = new Set(['pack_purchase', 'pack_refund', 'card_purchase', 'card_fee']);
/** A bought card after the clean round: listed, sold (back or through its listing), or held. */
const SETTLED_CARD = new Set(['held', 'listed', 'sold']);
const usd = (cents: number) => `${cents < 0 ? '-' : ''}$${(Math.abs(cents) / 100).toFixed(2)}`;

export function audit(input: AuditInput): AuditResult {
  const ledger = Ledger.open(input.ledgerPath, { readonly: true });
  try {
    return auditWith(ledger, input);
  } finally {
    ledger.close();
  }
}

/**
 * A bought card has two names when the world gives it a pull id of its own: its sale's transaction
 * id (what the purchase answers) and its pull id (what the vault shows). The audit counts it under
 * the transaction id, whichever name the bot booked it by.
 */
function saleNames(cardSales: AuditInput['cardSales']): (pullId: string) => string {
  const txnOf = new Map<string, string>();
  for (const [txn, sale] of cardSales ?? [])
    if (sale.pullId && sale.pullId !== txn) txnOf.set(sale.pullId, txn);
  return (pullId) => txnOf.get(pullId) ?? pullId;
}

function auditWith(ledger: Ledger, input: AuditInput): AuditResult {
  const problems: string[] = [];
  const notes: string[] = [];
  const canon = saleNames(input.cardSales);
  const raw = ledger.reportData(0, Number.MAX_SAFE_INTEGER);
  const data = { ...raw, pulls: raw.pulls.map((p) => ({ ...p, pullId: canon(p.pullId) })) };
  const orderOf = new Map(data.orders.map((o) => [o.checkoutId, o]));
  // An order settled without its answer is `settled:<key>`; an extra charge of one intent is booked
  // under `<key>-x<n>`: both belong to the bot's original key.
  // A random key may itself end in `-x<digits>`: only a key whose stem is an intent is an extra.
  const baseKey = (intentKey: string) => {
    const stem = intentKey.replace(/-x\d+$/, '');
    return stem !== intentKey && ledger.getIntent(stem) ? stem : intentKey;
  };
  const ordersByKey = new Map<string, number>();
  for (const o of data.orders)
    ordersByKey.set(baseKey(o.intentKey), (ordersByKey.get(baseKey(o.intentKey)) ?? 0) + 1);

  // Charges: purchases the simulator did not refund, each tied to the bot's original key.
  const refunded = new Set(input.simEntries.filter((e) => e.kind === 'pack_refund').map((e) => e.ref));
  const packCharges = input.simEntries.filter((e) => e.kind === 'pack_purchase' && !refunded.has(e.ref));
  // A card sale is two entries (price, fee) under its transaction id: one charge.
  const cardSales = cardSalesOf(input.simEntries);
  const charges = [
    ...packCharges,
    ...[...cardSales.values()].map((c) => ({
      ref: c.txn,
      amountCents: -(c.priceCents + c.feeCents),
      at: c.at,
    })),
  ];
  const pullOf = new Map(data.pulls.map((p) => [p.pullId, p]));
  const keyOfCard = (txn: string) => {
    const pull = pullOf.get(txn);
    return pull ? orderOf.get(pull.checkoutId)?.intentKey : undefined;
  };
  const orderKey = (k: string | undefined) => (k === undefined ? undefined : baseKey(k));
  const byKey = new Map<string, string[]>();
  let doubleCharges = 0;
  for (const c of charges) {
    const key =
      input.seen.get(c.ref)?.originalKey ??
      input.cardSales?.get(c.ref)?.originalKey ??
      orderKey(orderOf.get(c.ref)?.intentKey) ??
      orderKey(keyOfCard(c.ref));
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
  const handed = new Set<string>();
  for (const c of packCharges) for (const id of input.seen.get(c.ref)?.pullIds ?? []) handed.add(id);
  for (const txn of cardSales.keys()) handed.add(txn);
  for (const v of input.vault) if (v.pullId) handed.add(canon(v.pullId));
  let lostPulls = 0;
  for (const id of handed)
    if (!pullOf.has(id)) {
      lostPulls++;
      problems.push(`pull ${id}: handed out by the simulator, not in the ledger`);
    }
  let inWindow = 0;
  for (const v of input.vault) {
    if (v.listed || v.kind !== 'card' || !v.pullId || !pullOf.has(canon(v.pullId))) continue;
    const status = pullOf.get(canon(v.pullId))!.status;
    if (status === 'held') continue;
    if (v.pulledAt !== null && input.now > v.pulledAt + input.freshWindowMs) {
      lostPulls++;
      problems.push(`pull ${v.pullId}: still in the vault past its 0.9 window (ledger: ${status})`);
    } else inWindow++;
  }
  if (inWindow > 0)
    notes.push(`${inWindow} pull(s) unsold and unlisted in the vault, still inside their 0.9 window`);

  const cards = auditCards(data, cardSales, input.cardSales);
  problems.push(...cards.problems);
  lostPulls += cards.lost;

  // Money: both sides' charges and payouts.
  const ledgerCharges = data.orders.reduce((n, o) => n + o.totalChargedCents, 0);
  const simCharges = -input.simEntries
    .filter((e) => CHARGE_KINDS.has(e.kind))
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
    cardOrders: data.orders.filter((o) => o.operation === 'card').length,
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
  const orders = r.cardOrders > 0 ? `${r.orders} orders (${r.cardOrders} cards)` : `${r.orders} orders`;
  return `chaos: ${r.kills} kills, ${orders}, ${r.charges} charges, ${r.doubleCharges} double charges, ${r.lostPulls} lost pulls, ${r.soldAtFresh} sold at 0.9 of ${r.cardPulls}, ${books}`;
}

interface CardSale {
  txn: string;
  priceCents: number;
  feeCents: number;
  at: number;
}

/** The simulator's card sales to the account: transaction id → price and fee charged. */
function cardSalesOf(entries: readonly SimLedgerEntry[]): Map<string, CardSale> {
  const out = new Map<string, CardSale>();
  for (const e of entries) {
    if (e.kind !== 'card_purchase' && e.kind !== 'card_fee') continue;
    const sale = out.get(e.ref) ?? { txn: e.ref, priceCents: 0, feeCents: 0, at: e.at };
    if (e.kind === 'card_purchase') sale.priceCents -= e.amountCents;
    else sale.feeCents -= e.amountCents;
    out.set(e.ref, sale);
  }
  return out;
}

type ReportData = Pick<ReturnType<Ledger['reportData']>, 'orders' | 'pulls'>;

/**
 * Card purchases, sale by sale: each charged sale booked by exactly one ledger order whose price
 * and fee are the simulator's to the cent (its card's pull id is the transaction id); no card
 * bought again while the account still held it from an earlier sale; every bought card held,
 * listed or sold after the clean round. Charges per key are checked with the packs' (double
 * charges).
 */
function auditCards(
  data: ReportData,
  sales: ReadonlyMap<string, CardSale>,
  cardOf: AuditInput['cardSales'],
): { problems: string[]; lost: number } {
  const problems: string[] = [];
  let lost = 0;
  const cardOrders = data.orders.filter((o) => o.operation === 'card');
  const pullsByOrder = new Map<string, string[]>();
  for (const p of data.pulls)
    if (p.origin === 'purchase')
      pullsByOrder.set(p.checkoutId, [...(pullsByOrder.get(p.checkoutId) ?? []), p.pullId]);
  const bookedBy = new Map<string, typeof cardOrders>();
  for (const o of cardOrders) {
    const txns = pullsByOrder.get(o.checkoutId) ?? [];
    if (txns.length !== 1)
      problems.push(
        `card order ${o.checkoutId} (intent ${o.intentKey}): ${txns.length} bought card(s) booked`,
      );
    for (const t of txns) bookedBy.set(t, [...(bookedBy.get(t) ?? []), o]);
  }
  for (const sale of sales.values()) {
    const booked = bookedBy.get(sale.txn) ?? [];
    if (booked.length !== 1) {
      problems.push(
        `card sale ${sale.txn} (${usd(sale.priceCents + sale.feeCents)}): booked ${booked.length} time(s)`,
      );
      continue;
    }
    const o = booked[0]!;
    if (
      o.priceCents !== sale.priceCents ||
      o.feeCents !== sale.feeCents ||
      o.totalChargedCents !== sale.priceCents + sale.feeCents
    )
      problems.push(
        `card sale ${sale.txn}: simulator ${usd(sale.priceCents)} + ${usd(sale.feeCents)}, ledger ${usd(o.priceCents ?? 0)} + ${usd(o.feeCents ?? 0)} (total ${usd(o.totalChargedCents)})`,
      );
  }
  for (const [txn, orders] of bookedBy)
    if (!sales.has(txn))
      problems.push(
        `ledger books card sale ${txn} (${orders.length} order(s)), not charged by the simulator`,
      );

  // One card bought twice: only after the account let go of it in between (sold it back, or its
  // listing filled), never as a second purchase for one decision.
  const pullOf = new Map(data.pulls.map((p) => [p.pullId, p]));
  const byCard = new Map<string, CardSale[]>();
  for (const sale of sales.values()) {
    const card = cardOf?.get(sale.txn)?.cardId ?? pullOf.get(sale.txn)?.cardId;
    if (card !== undefined) byCard.set(card, [...(byCard.get(card) ?? []), sale]);
  }
  for (const [card, list] of byCard) {
    list.sort((a, b) => a.at - b.at);
    for (let i = 1; i < list.length; i++) {
      const before = pullOf.get(list[i - 1]!.txn);
      if (before?.status !== 'sold' || before.statusAt > list[i]!.at)
        problems.push(
          `card ${card} bought again (${list[i]!.txn}) while held from ${list[i - 1]!.txn} (${before?.status ?? 'not in the ledger'})`,
        );
    }
  }

  for (const p of data.pulls)
    if (p.origin === 'purchase' && !SETTLED_CARD.has(p.status)) {
      lost++;
      problems.push(`bought card ${p.cardId} (${p.pullId}): ${p.status} after the clean round`);
    }
  return { problems, lost };
}
