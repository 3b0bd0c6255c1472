/**
 * Rebuilds the API view of a pull from its ledger row, so a pull is decided by the same pure
 * `decidePull` whether it arrived a millisecond ago or before a restart.
 */
import { FRESH_RATE, LATE_RATE } from '../../api/rules.js';
import type { Pull } from '../../api/schemas.js';
import { iso } from '../../core/clock.js';
import { toUsd } from '../../core/money.js';
import type { PullRow } from '../../store/ledger.js';

export function pullFromRow(row: PullRow): Pull {
  const hit = {
    rarity_tier: row.rarityTier,
    bucket: row.bucket,
    bucket_odds: 0,
    is_chase: row.isChase,
    chase_label: null,
  };
  if (row.kind === 'sealed_pack')
    return {
      pull_id: row.pullId,
      kind: 'sealed_pack',
      item: { id: row.cardId, name: row.name },
      value: toUsd(row.valueCents),
      hit,
      buyback: null,
    } as Pull;
  const hasOffer = row.buybackCents !== null && row.buybackValidUntil !== null;
  return {
    pull_id: row.pullId,
    kind: 'card',
    item: { id: row.cardId, name: row.name, market_value: toUsd(row.valueCents) },
    value: toUsd(row.valueCents),
    hit,
    buyback: hasOffer
      ? {
          amount: toUsd(row.buybackCents ?? 0),
          rate: row.buybackRate ?? FRESH_RATE,
          valid_until: iso(row.buybackValidUntil ?? 0),
          after: {
            amount: toUsd(row.afterCents ?? 0),
            rate: row.afterRate ?? LATE_RATE,
            valid_until: iso(row.afterValidUntil ?? 0),
          },
        }
      : null,
  } as Pull;
}
