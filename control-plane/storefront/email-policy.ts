import { ApiError } from '../../shared/errors.js';
import { verifiedEmail } from './holders.js';

/**
 * A plan's `verifiedEmailPolicy` (spec: Resources › Plan), for the buyer's email and a stateful
 * seller: `off` never tells the seller the email; `requested` tells it once a human with a verified
 * email has claimed the agent (on the account write the claim leaves, and every one after);
 * `required` sells the plan only to such an agent (401 `bearer_required`, whose `auth` block says
 * how to get claimed), so every write of its accounts carries the email. In both write variants:
 * the later one's `buyerEmail` field and header, the original's `buyerEmail` field.
 */
export type VerifiedEmailPolicy = 'off' | 'requested' | 'required';

type Buyer = { email: string | null; emailVerifiedAt: Date | null } | null;

/** The email a seller may be told under the plan's policy: a verified one, never under `off`. */
export function emailForSeller(policy: string, buyer: Buyer): string | null {
  return policy === 'off' ? null : verifiedEmail(buyer);
}

type ClaimedAgent = { buyerId: string | null; claimedAt: Date | null; buyer: { emailVerifiedAt: Date | null } | null };

/** Whether the agent is claimed by a human whose email is verified. */
export function claimedByVerifiedHuman(agent: ClaimedAgent): boolean {
  return agent.buyerId !== null && agent.claimedAt !== null && agent.buyer?.emailVerifiedAt != null;
}

/** `required`: refuses an agent no verified human has claimed, before any payment is asked. */
export function refuseUnclaimedUnderRequired(policy: string, agent: ClaimedAgent, what: string): void {
  if (policy !== 'required' || claimedByVerifiedHuman(agent)) return;
  throw new ApiError('bearer_required', `${what} is for an agent claimed by a human with a verified email: see auth.claim.`);
}
