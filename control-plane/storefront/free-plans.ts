import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { violatedConstraint } from '../db/constraints.js';
import { refuseUnclaimedUnderRequired } from './email-policy.js';
import { agentOwnerForPurchase } from './holders.js';
import type { PurchaseTerms } from './purchase-terms.js';

type Tx = Prisma.TransactionClient;

/**
 * Who may open a plan that costs nothing (a free trial, or a $0 plan), and who is taking it.
 *
 * The email policy: a free trial follows its plan's `verifiedEmailPolicy`; a $0 standard plan
 * always asks for a verified email (spec: Free plans). `required` needs an agent claimed by a
 * human whose email is verified; `requested` and `off` let an unclaimed agent open it, and the
 * email reaches a stateful seller on a later account write once a human claims the agent.
 *
 * The taker is the human (buyer) behind the agent, or the agent itself while unclaimed: each
 * takes a given free plan once. An agent that took a trial unclaimed has used it for the human who
 * later claims it, whose other agents are then refused. Read inside the opening transaction, in
 * turn with a claim of the agent (holders.ts › agentOwnerForPurchase).
 */
export async function freeTaker(tx: Tx, agentId: string, terms: PurchaseTerms): Promise<string> {
  const agent = await agentOwnerForPurchase(tx, agentId);
  const policy = terms.plan.kind === 'free_trial' ? terms.plan.verifiedEmailPolicy : 'required';
  refuseUnclaimedUnderRequired(policy, agent, 'This free plan');
  return agent.buyerId ?? agentId;
}

/**
 * Takes the free plan for `takerId` inside the opening transaction: once per taker, and within
 * the plan's `maxClaims`, which counts the free accounts the plan has ever opened (canceled ones
 * too). The count rises by a guarded update, so concurrent takers never pass the bound.
 */
export async function takeFreePlan(tx: Tx, terms: PurchaseTerms, takerId: string, accessId: string): Promise<void> {
  const taken = await tx.trialClaim.findUnique({ where: { planId_takerId: { planId: terms.plan.id, takerId } } });
  if (taken) throw alreadyTaken();
  const counted = await tx.plan.updateMany({
    where: { id: terms.plan.id, ...(terms.plan.maxClaims === null ? {} : { trialsOpened: { lt: terms.plan.maxClaims } }) },
    data: { trialsOpened: { increment: 1 } },
  });
  if (counted.count !== 1) throw new ApiError('trial_claims_exhausted');
  try {
    await tx.trialClaim.create({ data: { planId: terms.plan.id, takerId, accessId } });
  } catch (err) {
    throw violatedConstraint(err) === 'unique' ? alreadyTaken() : err;
  }
}

const alreadyTaken = () => new ApiError('trial_already_claimed', 'You have taken this free plan already: see /purchases/receipt.');
