/**
 * The pay URL's paths for agents: reserved on every pay URL and never forwarded to the seller
 * (docs/decisions.md › Proxy). The proxy serves them; the control-plane writes the claim links.
 */
export const AGENT_PATHS = {
  challenge: '/agents/challenge',
  register: '/agents/register',
  claim: '/agents/claim',
  /** Followed by the token of a link hub mailed. */
  confirmClaim: '/agents/claim/confirm/',
  releaseClaim: '/agents/claim/release/',
  /** The storefront (spec: Pay URL endpoints): buy, renew or top up; list purchases; get a key. */
  extend: '/extend',
  receipt: '/purchases/receipt',
  redeem: '/keys/redeem',
} as const;
