/** One read of the whole vault (every category the account trades), keyed by card id. */

import { iterVault } from '../../api/paginate.js';
import type { PartnerApi } from '../../api/partner-api.js';
import type { Category, VaultEntry } from '../../api/schemas.js';

export async function readVault(
  api: PartnerApi,
  categories: readonly Category[],
): Promise<Map<string, VaultEntry>> {
  const out = new Map<string, VaultEntry>();
  for (const category of categories)
    for await (const entry of iterVault(api, { category, per_page: 200 })) out.set(entry.card_id, entry);
  return out;
}
