import { AGENT_PATHS } from '../../shared/agent-paths.js';
import { originUrl, type PublicOrigin } from '../arrival/public-origin.js';

/** Where an agent gets a key for an account, and renews or tops it up (spec: `redeemUrl`, `topUpUrl`). */
export function accountLinks(origin: PublicOrigin, accessId: string) {
  const base = originUrl(origin);
  const id = encodeURIComponent(accessId);
  return { redeemUrl: `${base}${AGENT_PATHS.redeem}?accessId=${id}`, topUpUrl: `${base}${AGENT_PATHS.extend}?accessId=${id}` };
}

/**
 * What a 402 tells an identified agent its plan did not cover: the account to top up or renew,
 * and where to choose and buy a plan.
 */
export function planLinks(origin: PublicOrigin, accessId: string | null) {
  const base = originUrl(origin);
  return {
    ...(accessId ? { accessId, topUpUrl: accountLinks(origin, accessId).topUpUrl } : {}),
    manifestUrl: `${base}/manifest.json`,
    purchaseUrl: `${base}${AGENT_PATHS.extend}`,
  };
}
