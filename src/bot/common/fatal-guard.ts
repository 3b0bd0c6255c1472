/**
 * A fatal answer (401, 403, 422 key reused, an unlisted status) means the key or the bot is wrong,
 * whatever the request: the runner stops (graceful: orders in flight finish, pulls in their window
 * are sold) and exits 1, so an operator or orchestrator sees it; the next start's scope check then
 * names what is missing. Without this a fatal answer to a purchase only stopped opening and the
 * process ran on idle. The error still reaches the caller, which records it as usual.
 */
import { isPartnerApiError } from '../../api/errors.js';
import { ENDPOINTS, type PartnerApi } from '../../api/partner-api.js';

export function stopOnFatal(api: PartnerApi, onFatal: (error: unknown) => void): PartnerApi {
  const guarded = {} as Record<string, unknown>;
  for (const op of Object.keys(ENDPOINTS) as (keyof PartnerApi)[]) {
    const call = api[op].bind(api) as (...args: unknown[]) => Promise<unknown>;
    guarded[op] = async (...args: unknown[]) => {
      try {
        return await call(...args);
      } catch (e) {
        if (isPartnerApiError(e) && e.kind === 'fatal') onFatal(e);
        throw e;
      }
    };
  }
  return guarded as unknown as PartnerApi;
}
