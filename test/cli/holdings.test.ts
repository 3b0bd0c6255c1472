/**
 * `packbot vault` and `listings`: where the ledger and the vault agree, card by card. A sealed
 * pack the vault leaves out agrees (the spec does not promise sealed packs in the vault); one the
 * vault shows is compared like a card.
 */
import { describe, expect, it } from 'vitest';
import type { VaultEntry } from '../../src/api/schemas.js';
import { cardView, SEALED_NOT_SHOWN } from '../../src/cli/holdings.js';
import type { ListingRow, PullRow } from '../../src/store/ledger.js';

const pull = (kind: PullRow['kind']) =>
  ({ pullId: 'p1', cardId: 'c1', name: 'x', kind, valueCents: 500, status: 'held' }) as PullRow;
const entry = (listed: boolean) =>
  ({ card_id: 'c1', item: { name: 'x' }, value: 5, listed, buyback: null }) as unknown as VaultEntry;
const listing = { priceCents: 700 } as ListingRow;

describe('vault beside the ledger: agree', () => {
  it.each([
    ['a sealed pack the vault leaves out', undefined, pull('sealed_pack'), undefined, true, SEALED_NOT_SHOWN],
    ['a sealed pack the vault shows, held in both', entry(false), pull('sealed_pack'), undefined, true, null],
    [
      'a sealed pack the vault shows listed, held in the ledger',
      entry(true),
      pull('sealed_pack'),
      undefined,
      false,
      null,
    ],
    ['a card the vault leaves out', undefined, pull('card'), undefined, false, null],
    ['a card held in both', entry(false), pull('card'), undefined, true, null],
    ['a card listed in both', entry(true), pull('card'), listing, true, null],
    ['a card the ledger lists, unlisted in the vault', entry(false), pull('card'), listing, false, null],
    ['a vault card the ledger does not know', entry(false), undefined, undefined, false, null],
  ] as const)('%s', (_name, e, p, l, agree, note) => {
    const view = cardView('main', e, p, l, undefined);
    expect(view).toMatchObject({ agree, note, in_vault: e !== undefined });
  });
});
