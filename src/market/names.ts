/** Name and set lists for generated cards, per category (cosmetic, but realistic enough to read). */
import type { Category } from '../api/schemas.js';

export const CARD_NAMES: Record<Category, readonly string[]> = {
  pokemon: [
    'Charizard',
    'Pikachu',
    'Umbreon',
    'Rayquaza',
    'Mewtwo',
    'Gengar',
    'Lugia',
    'Blastoise',
    'Eevee',
    'Gardevoir',
    'Mew',
    'Snorlax',
  ],
  onepiece: [
    'Monkey D. Luffy',
    'Roronoa Zoro',
    'Nami',
    'Shanks',
    'Trafalgar Law',
    'Boa Hancock',
    'Portgas D. Ace',
    'Yamato',
    'Sanji',
    'Nico Robin',
  ],
  sports: [
    'Rookie Patch Auto',
    'Chrome Refractor',
    'Prizm Silver',
    'Base Rookie',
    'Jersey Relic',
    'Gold Vinyl',
    'Select Tie-Dye',
    'Optic Holo',
  ],
  riftbound: [
    'Jinx, Loose Cannon',
    'Ahri, Nine-Tailed Fox',
    'Yasuo, Unforgiven',
    'Lux, Lady of Luminosity',
    'Viktor, Herald',
    'Teemo, Scout',
    'Garen, Might of Demacia',
  ],
  watches: [
    'Submariner 124060',
    'Speedmaster Moonwatch',
    'Santos Medium',
    'Black Bay 58',
    'Royal Oak 15500',
    'Aquanaut 5167',
    'Navitimer B01',
    'Tank Must',
  ],
};

export const SET_NAMES: Record<Category, readonly string[]> = {
  pokemon: ['Base Set', 'Evolving Skies', 'Crown Zenith', '151', 'Hidden Fates'],
  onepiece: ['Romance Dawn', 'Paramount War', 'Wings of the Captain', 'Awakening of the New Era'],
  sports: ['Prizm 2023', 'Topps Chrome 2024', 'Select 2022', 'Optic 2023'],
  riftbound: ['Origins', 'Proving Grounds', 'Spiritforged'],
  watches: ['Pre-owned', 'Vintage', 'Modern'],
};

export const SEALED_NAMES: Record<Category, readonly string[]> = {
  pokemon: ['Booster Pack', 'Sleeved Booster', 'Mini Tin'],
  onepiece: ['Booster Pack', 'Starter Deck'],
  sports: ['Hobby Pack', 'Blaster Pack'],
  riftbound: ['Booster Pack', 'Champion Deck'],
  watches: ['Strap Kit', 'Travel Pouch'],
};

export const GRADERS = ['PSA', 'BGS', 'CGC'] as const;
