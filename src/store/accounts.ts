/**
 * What the ledger knows of each account besides its orders and holdings: the balances the service
 * reported, the balance expected from the flows since (the reconciler's drift), and facts learnt
 * from the service (e.g. its purchase report `user_id`).
 */
import type { Cents } from '../core/money.js';
import { LedgerPart } from './ledger-part.js';
import { EVER } from './statements.js';
import type { BalanceRow } from './types.js';

export class Accounts extends LedgerPart {
  /** A balance the service reported (`account`, `sell-back`, `purchase`, `reconcile`, ...). */
  recordBalance(account: string, balanceCents: Cents, source: string, at?: number): BalanceRow {
    const now = this.now(at);
    const info = this.stmts.insertBalance.run(account, balanceCents, source, now);
    return { id: Number(info.lastInsertRowid), account, balanceCents, source, at: now };
  }

  latestBalance(account: string): BalanceRow | undefined {
    return this.stmts.latestBalance.get(account) as BalanceRow | undefined;
  }

  /**
   * The balance the ledger expects now: the last reported balance plus what was credited and minus
   * what was charged after it (for the reconciler's drift). Undefined before any observation.
   * Flows recorded in the same millisecond as the observation are assumed to be included in it.
   */
  expectedBalance(account: string): Cents | undefined {
    const last = this.latestBalance(account);
    if (!last) return undefined;
    const f = this.stmts.flowsAfter.get({ account, id: last.id, at: last.at, until: EVER }) as {
      payouts: number;
      proceeds: number;
      charged: number;
    };
    return last.balanceCents + f.payouts + f.proceeds - f.charged;
  }

  /** A fact learnt about an account from the service (e.g. its purchase report `user_id`). */
  accountFact(account: string, fact: string): string | undefined {
    return (this.stmts.getFact.get(account, fact) as { value: string } | undefined)?.value;
  }

  setAccountFact(account: string, fact: string, value: string, at?: number): void {
    this.stmts.setFact.run({ account, fact, value, now: this.now(at) });
  }
}
