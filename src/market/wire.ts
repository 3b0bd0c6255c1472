/**
 * How the simulator's cards and sealed packs look on the wire (the spec's Card and SealedPack):
 * values at the inventory's current index, image URLs under the card's image root. Which of the
 * card object's fields are always there is not shown by the spec (`rules.card_fields`).
 */
import type { Card, SealedPack } from '../api/schemas.js';
import { toUsd } from '../core/money.js';
import { type CardRec, cardValue, type Inventory } from './inventory.js';
import type { Rules } from './world-schema.js';

type CardRules = Pick<Rules, 'card_fields'>;

/** The fields a card object may lack (null or absent) when `rules.card_fields` says so. */
const OPTIONAL_FIELDS = [
  'grading_company',
  'grading_rank',
  'cert_number',
  'back_image',
  'render_image',
  'slab_label',
] as const;

export function cardWire(inv: Inventory, c: CardRec, rules: CardRules): Card {
  const img = c.imageUrl;
  const card: Card = {
    id: c.id,
    category: c.category,
    name: c.name,
    set: c.set,
    grading_company: c.gradingCompany,
    grading_rank: c.gradingRank,
    cert_number: c.certNumber,
    market_value: toUsd(cardValue(inv, c)),
    front_image: `${img}/front.png`,
    back_image: `${img}/back.png`,
    render_image: `${img}/render.png`,
    image_url: `${img}/front.png`,
    slab_label: `${c.gradingCompany} ${c.gradingRank} ${c.name}`,
  };
  if (rules.card_fields === 'nulls') for (const k of OPTIONAL_FIELDS) card[k] = null;
  else if (rules.card_fields === 'omitted') for (const k of OPTIONAL_FIELDS) delete card[k];
  return card;
}

export function sealedWire(c: CardRec): SealedPack {
  return { id: c.id, name: c.name, set: c.set, category: c.category, image_url: `${c.imageUrl}/front.png` };
}

/** A sealed pack listed among a pool's cards, or in the vault (it has a market value like a card). */
export function sealedAsCard(inv: Inventory, c: CardRec): Card {
  return { ...sealedWire(c), market_value: toUsd(cardValue(inv, c)), kind: 'sealed_pack' };
}
