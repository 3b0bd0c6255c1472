/**
 * What the harness asks the simulator directly (never through the proxy): its fault rules, its
 * books and state for the audit, and the account's vault as the service sees it.
 */
import { API_PREFIX } from '../src/api/partner-api.js';

export interface SimLedgerEntry {
  kind: string;
  accountId: string;
  ref: string;
  amountCents: number;
  /** Epoch ms on the simulator's clock. */
  at: number;
}

export interface SimOrder {
  key: string;
  checkoutId: string;
  pullIds: string[];
  transactionId?: string;
  cardId?: string;
  /** The bought card's pull_id in the vault and sell-back (the world's `purchased_card_pull_id`). */
  pullId?: string;
}

export interface SimVaultCard {
  cardId: string;
  pullId: string | null;
  listed: boolean;
  kind: string;
  /** When it was pulled (epoch ms on the simulator's clock), null for a bought card. */
  pulledAt: number | null;
}

async function call(url: string, init: RequestInit = {}): Promise<unknown> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok)
    throw new Error(`chaos: ${init.method ?? 'GET'} ${url} answered ${res.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as unknown;
}

export class SimAdmin {
  constructor(
    readonly url: string,
    private readonly key: string,
  ) {}

  async setFaults(faults: Record<string, Record<string, number>>): Promise<void> {
    await call(`${this.url}/sim/v1/faults`, { method: 'DELETE' });
    if (Object.keys(faults).length === 0) return;
    await call(`${this.url}/sim/v1/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ faults }),
    });
  }

  /** The simulator's clock (epoch ms). */
  async now(): Promise<number> {
    const body = (await call(`${this.url}/sim/v1/clock`)) as { now: string };
    return Date.parse(body.now);
  }

  async ledger(account: string): Promise<SimLedgerEntry[]> {
    const body = (await call(`${this.url}/sim/v1/ledger`)) as { entries: Record<string, unknown>[] };
    return body.entries
      .filter((e) => e.accountId === account)
      .map((e) => ({
        kind: String(e.kind),
        accountId: String(e.accountId),
        ref: String(e.ref),
        amountCents: typeof e.amountCents === 'number' ? e.amountCents : Math.round(Number(e.amount) * 100),
        at: Date.parse(String(e.at)),
      }));
  }

  /**
   * Finished orders of `account`: idempotency key (as the simulator saw it), checkout, pulls; a card
   * order's sale (`transactionId`, the ref of its ledger entries) and card.
   */
  async orders(account: string): Promise<SimOrder[]> {
    const body = (await call(`${this.url}/sim/v1/orders`)) as { orders: Record<string, unknown>[] };
    return body.orders
      .filter((o) => o.account === account)
      .map((o) => ({
        key: String(o.key),
        checkoutId: String(o.checkout_id),
        pullIds: Array.isArray(o.pull_ids) ? o.pull_ids.map(String) : [],
        ...(typeof o.transaction_id === 'string'
          ? {
              transactionId: o.transaction_id,
              cardId: String(o.card_id),
              pullId: typeof o.pull_id === 'string' ? o.pull_id : o.transaction_id,
            }
          : {}),
      }));
  }

  /** The model's own invariant violations (`GET /sim/v1/state`'s `audit`). */
  async modelProblems(): Promise<string[]> {
    const state = (await call(`${this.url}/sim/v1/state`)) as { audit?: unknown };
    return Array.isArray(state.audit) ? state.audit.map(String) : [];
  }

  async vault(category: string): Promise<SimVaultCard[]> {
    const out: SimVaultCard[] = [];
    for (let page = 1; ; page++) {
      const body = (await call(
        `${this.url}${API_PREFIX}/vault?category=${category}&page=${page}&per_page=200`,
        {
          headers: { authorization: `Bearer ${this.key}` },
        },
      )) as { total: number; cards: Record<string, unknown>[] };
      for (const c of body.cards) {
        const item = c.item as { kind?: string } | undefined;
        out.push({
          cardId: String(c.card_id),
          pullId: typeof c.pull_id === 'string' ? c.pull_id : null,
          listed: c.listed === true,
          kind: item?.kind ?? 'card',
          pulledAt: typeof c.pulled_at === 'string' ? Date.parse(c.pulled_at) : null,
        });
      }
      if (body.cards.length === 0 || out.length >= body.total) return out;
    }
  }
}
