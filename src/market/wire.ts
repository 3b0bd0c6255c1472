/**
 * How the simulator's cards and sealed packs look on the wire (the spec's Card and SealedPack):
 * values at the inventory's current index, image URLs under the card's image root.
 */
import type { Card, SealedPack } from '../api/schemas.js';
import { toUsd } from '../core/money.js';
import { type CardRec, cardValue, type Inventory } from './inventory.js';

export function cardWire(inv: Inventory, c: CardRec): Card {
  const img = c.imageUrl;
  return {
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
}

export function sealedWire(c: CardRec): SealedPack {
  return { id: c.id, name: c.name, set: c.set, category: c.category, image_url: `${c.imageUrl}/front.png` };
}

/** A sealed pack listed among a pool's cards (it has a market value like a card). */
export function sealedAsCard(inv: Inventory, c: CardRec): Card {
  return { ...sealedWire(c), market_value: toUsd(cardValue(inv, c)), kind: 'sealed_pack' };
}
