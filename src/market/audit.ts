/**
 * The model's invariants, checked over the whole state: every card is in exactly one place and the
 * indexes agree with its location, released slots are empty and referenced by nothing, band value
 * sums have not drifted, and each balance is its starting balance plus its ledger entries.
 */
import type { Category } from '../api/schemas.js';
import type { MarketState } from './state.js';

/** The violations of the model's invariants (empty when all hold). */
export function audit(s: MarketState): string[] {
  const problems: string[] = [];
  const seen = new Map<number, string>();
  const claim = (slot: number, where: string) => {
    const prev = seen.get(slot);
    if (prev) problems.push(`card ${s.inv.cards[slot]!.id} is in ${prev} and ${where}`);
    seen.set(slot, where);
  };
  const released = auditReleased(s);
  if (released.length > 0) return released;
  for (const pool of s.inv.pools) {
    for (const b of pool.bands) {
      let sum = 0;
      for (let i = 0; i < b.bag.count; i++) {
        const c = s.inv.cards[b.bag.at(i)]!;
        claim(c.slot, `pool ${pool.spec.pack_type}/${b.spec.bucket_id}`);
        if (c.loc !== 'pool' || c.pool !== pool.index || c.band !== b.index)
          problems.push(`card ${c.id} in a band but marked ${c.loc}`);
        sum += c.anchorCents;
      }
      if (sum !== b.sumCents) problems.push(`band ${b.spec.bucket_id} value sum drifted`);
    }
    if (pool.chase && !pool.chase.hit) claim(pool.chase.slot, `chase of ${pool.spec.pack_type}`);
  }
  for (const c of Object.keys(s.inv.shop) as Category[])
    for (const slot of s.inv.shop[c]) {
      claim(slot, 'shop');
      if (s.inv.cards[slot]!.loc !== 'shop')
        problems.push(`shop card ${s.inv.cards[slot]!.id} marked elsewhere`);
    }
  for (const slot of s.inv.listings) {
    claim(slot, 'listings');
    const c = s.inv.cards[slot]!;
    if (c.loc !== 'listed' && c.loc !== 'listed_other') problems.push(`listed card ${c.id} marked ${c.loc}`);
  }
  for (const c of s.inv.cards) {
    if (!c) continue;
    if ((c.loc === 'vault' || c.loc === 'sealed' || c.loc === 'shipped') && !c.owner)
      problems.push(`held card ${c.id} has no owner`);
    if (c.loc === 'vault' || c.loc === 'sealed') claim(c.slot, `vault of ${c.owner}`);
    if (
      !seen.has(c.slot) &&
      (c.loc === 'pool' || c.loc === 'shop' || c.loc === 'listed' || c.loc === 'listed_other')
    )
      problems.push(`card ${c.id} marked ${c.loc} but in no index`);
  }
  for (const a of s.accounts.values()) {
    let sum = a.initialCents;
    for (const e of s.ledger) if (e.accountId === a.id) sum += e.amountCents;
    if (sum !== a.balanceCents) problems.push(`account ${a.id}: balance ${a.balanceCents} != ledger ${sum}`);
    if (a.balanceCents < 0) problems.push(`account ${a.id} is negative`);
  }
  return problems;
}

/** Released slots are empty and referenced by nothing; the id index holds exactly the live cards. */
function auditReleased(s: MarketState): string[] {
  const inv = s.inv;
  const problems: string[] = [];
  const empty = (slot: number, where: string) => {
    if (inv.cards[slot] === undefined) problems.push(`${where} refers to released slot ${slot}`);
  };
  for (const slot of inv.free)
    if (inv.cards[slot] !== undefined) problems.push(`released slot ${slot} holds a card`);
  for (const pool of inv.pools) {
    for (const b of pool.bands)
      for (let i = 0; i < b.bag.count; i++) empty(b.bag.at(i), `band ${b.spec.bucket_id}`);
    if (pool.chase) empty(pool.chase.slot, `chase of ${pool.spec.pack_type}`);
  }
  for (const c of Object.keys(inv.shop) as Category[]) for (const slot of inv.shop[c]) empty(slot, 'shop');
  for (const slot of inv.listings) empty(slot, 'listings');
  for (const a of s.acquisitions.values()) empty(a.slot, `acquisition ${a.id}`);
  let live = 0;
  for (const c of inv.cards) {
    if (!c) continue;
    live++;
    if (inv.byId.get(c.id) !== c) problems.push(`card ${c.id} is not indexed by its id`);
    if (inv.goneIds.has(c.id)) problems.push(`card ${c.id} is live and released`);
  }
  if (live !== inv.byId.size) problems.push(`${inv.byId.size - live} ids index no live card`);
  return problems;
}
