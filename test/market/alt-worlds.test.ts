/**
 * The alternative worlds (config/worlds/alt-*.yaml) load with the world loader, keep the default
 * world's catalog, and differ from the default in every rule the spec leaves open, and from each
 * other wherever a rule has enough values. A market on each trades and answers as the client
 * reads it.
 */
import { describe, expect, it } from 'vitest';
import { ALT_WORLDS, worldLabel } from '../../chaos/worlds.js';
import { OPERATIONS } from '../../src/api/operations.js';
import { loadWorld } from '../../src/config/world-file.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { SILENT_SPEC_RULES } from '../../src/market/server-choices.js';
import { RulesSpec } from '../../src/market/world-schema.js';

const base = loadWorld();
const alts = ALT_WORLDS.map((path) => ({ name: worldLabel(path), world: loadWorld(path) }));

/** How many values a rule can take (enums and booleans; numbers and strings: unbounded). */
function valuesOf(rule: string): number {
  const s = (RulesSpec.shape as Record<string, { def: unknown }>)[rule];
  let def = s?.def as { type: string; innerType?: { def: unknown }; entries?: object } | undefined;
  while (def?.innerType) def = def.innerType.def as typeof def;
  if (def?.type === 'boolean') return 2;
  if (def?.type === 'enum') return Object.keys(def.entries ?? {}).length;
  return Number.POSITIVE_INFINITY;
}

describe('alternative worlds', () => {
  it('there are three, each loaded from its file with the default catalog', () => {
    expect(alts.map((a) => a.name)).toEqual(['alt-fee10', 'alt-sorted', 'alt-slowpay']);
    for (const { world } of alts) {
      expect(world.categories).toEqual(base.categories);
      expect(world.accounts).toEqual(base.accounts);
      expect(world.dynamics).toEqual(base.dynamics);
    }
  });

  it.each(alts)('$name differs from the default in every rule the spec leaves open', ({ world }) => {
    for (const rule of SILENT_SPEC_RULES) expect(world.rules[rule], rule).not.toEqual(base.rules[rule]);
    // The rules the spec fixes stay the spec's.
    for (const rule of [
      'fresh_rate',
      'fresh_window_seconds',
      'locked_rate',
      'lock_days',
      'card_fee',
    ] as const)
      expect(world.rules[rule], rule).toEqual(base.rules[rule]);
  });

  it('they differ from each other wherever a rule has a value left for each', () => {
    for (const rule of SILENT_SPEC_RULES) {
      const values = new Set(alts.map((a) => JSON.stringify(a.world.rules[rule])));
      expect(values.size, rule).toBe(Math.min(alts.length, valuesOf(rule) - 1));
    }
  });

  it.each(alts)('a market on $name trades and answers as the client reads them', async ({ world }) => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1, 12));
    const market = new Market(world, { clock, seed: 3 });
    const api = market.api('sk_sim_full');
    const packs = await api.listPacks({ category: 'pokemon' });
    const pack = packs.packs.find((p) => p.available)!;
    const order = api.purchasePacks({ pack_type: pack.pack_type, quantity: 3 }, 'alt-world-order-1');
    await clock.advance(world.rules.pack_purchase_answer_ms);
    const bought = await order;
    expect(bought.pulls).toHaveLength(3);
    const vault = await api.getVault({ category: 'pokemon' });
    expect(vault.total).toBeGreaterThan(0);
    const shop = await api.listShopCards({ category: 'pokemon', per_page: 5 });
    expect(shop.cards[0]!.sale_status).toBe(world.rules.shop_sale_status);
    const raw = await market.handle('getAccount', { authorization: 'Bearer sk_sim_full' });
    expect(OPERATIONS.getAccount.response.safeParse(raw).success).toBe(true);
    expect(market.audit()).toEqual([]);
  });
});
