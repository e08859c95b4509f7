import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { newId } from '../../shared/ids.js';
import { type AccountSnapshot, serializeSnapshot } from './account-write.js';
import { periodEnd, renewedPeriod } from './billing-period.js';
import { emailForSeller } from './email-policy.js';
import { agentOwnerForPurchase } from './holders.js';
import type { PurchasePlan, PurchaseTerms } from './purchase-terms.js';

/**
 * Every change to an account (`hubacc_`) goes through here, inside the caller's transaction:
 * the change, `stateVersion` raised by one, and for a stateful seller one account write in the
 * outbox describing the whole account at that version. A change first writes to the account's
 * row (the version), which takes PostgreSQL's row lock until commit and queues concurrent changes
 * on SQLite, so each change builds on the one before it: no renewal or top-up is lost or doubled.
 */

type Tx = Prisma.TransactionClient;

/**
 * What a purchase buys, paid or free: a new account for the agent (owned by its human, if it has
 * one), or the renewal or top-up of `accessId`.
 */
export async function applyPurchase(
  tx: Tx,
  input: { accessId: string; sellerId: string; agentId: string; terms: PurchaseTerms; now: Date },
): Promise<void> {
  if (input.terms.kind === 'purchase') await openAccount(tx, input);
  else await extendAccount(tx, input);
}

/** Opens a new account for a paid purchase, a free trial or a $0 plan. */
async function openAccount(
  tx: Tx,
  input: { accessId: string; sellerId: string; agentId: string; terms: PurchaseTerms; now: Date },
): Promise<void> {
  const { plan } = input.terms;
  const credit = grantedCredit(plan, input.terms.creditMicros);
  const agent = await agentOwnerForPurchase(tx, input.agentId);
  const seller = await tx.seller.findUniqueOrThrow({ where: { id: input.sellerId }, select: { stateful: true } });
  await tx.access.create({
    data: {
      id: input.accessId,
      sellerId: input.sellerId,
      planId: plan.id,
      agentId: input.agentId,
      buyerId: agent.buyerId,
      status: 'active',
      periodStart: input.now,
      periodEnd: periodEnd(input.now, plan.interval),
      stateVersion: 1,
      creditGrantedMicros: credit,
      balanceMicros: credit ?? 0n,
      // A stateful seller has the account once it acknowledges the account write; hub alone holds the others.
      provisioningState: seller.stateful ? 'pending' : 'active',
      // Until then it has none of it: what the write fails to give is taken back (delivery/outcomes.ts).
      ...(seller.stateful ? { unappliedCreditMicros: credit ?? 0n, appliedPeriodEnd: input.now } : {}),
    },
  });
  await recordChange(tx, input.accessId);
}

/**
 * Renews (a new period from now, the plan's included credit again) or tops up (the bought credit
 * added) an account; at a stateful seller, what it adds serves once the seller has it. Either
 * makes a canceled or suspended account active again (spec: States and transitions, a write that
 * carries `active` resumes it): what was unpaid is paid now. An account the seller never took goes
 * to the seller again, and serves calls once the seller has it.
 */
async function extendAccount(tx: Tx, input: { accessId: string; terms: PurchaseTerms; now: Date }): Promise<void> {
  const { plan } = input.terms;
  const locked = await tx.access.update({
    where: { id: input.accessId },
    data: { stateVersion: { increment: 1 } },
    include: { seller: { select: { stateful: true } } },
  });
  const added = input.terms.kind === 'topup' ? input.terms.creditMicros : plan.includedCreditMicros;
  // A top-up of an account whose period has ended (a canceled one has) starts a period as a
  // renewal would, without the included credit: otherwise the credit bought could not be used.
  const ended = locked.periodEnd !== null && locked.periodEnd <= input.now;
  const period = input.terms.kind === 'renewal' || ended ? renewedPeriod({ end: locked.periodEnd }, plan.interval, input.now) : undefined;
  const hasCredit = locked.creditGrantedMicros !== null || added > 0n;
  await tx.access.update({
    where: { id: input.accessId },
    data: {
      status: 'active',
      canceledAt: null,
      ...(locked.provisioningState === 'failed' ? { provisioningState: 'pending' } : {}),
      ...(period ? { periodStart: period.start, periodEnd: period.end } : {}),
      ...(hasCredit ? { creditGrantedMicros: (locked.creditGrantedMicros ?? 0n) + added, balanceMicros: { increment: added } } : {}),
      // At a stateful seller, what this adds serves once the seller has it: the credit is not
      // drawn on, and calls are served until the end of the period the seller has.
      ...(locked.seller.stateful
        ? {
            ...(hasCredit ? { unappliedCreditMicros: { increment: added } } : {}),
            ...(period && locked.periodEnd !== null ? { appliedPeriodEnd: locked.appliedPeriodEnd ?? locked.periodEnd } : {}),
          }
        : {}),
    },
  });
  await recordChange(tx, input.accessId);
}

/**
 * Suspends an account whose payment could not be captured (hub never serves an account that was
 * not paid for); the seller hears it in the next account write. Nothing when it is suspended already.
 */
export async function suspendUnpaid(tx: Tx, accessId: string): Promise<void> {
  const suspended = await tx.access.updateMany({
    where: { id: accessId, status: { not: 'suspended' } },
    data: { status: 'suspended', stateVersion: { increment: 1 } },
  });
  if (suspended.count === 1) await recordChange(tx, accessId);
}

/**
 * Cancels an account: its period ends now (a plan without one gets one that ends now), what is
 * left of its credit is no longer drawn on, and the next account write says so.
 */
export async function cancelAccount(tx: Tx, accessId: string, now: Date): Promise<void> {
  // Cancelling a canceled account changes nothing and sends nothing.
  const canceled = await tx.access.updateMany({
    where: { id: accessId, status: { not: 'canceled' } },
    data: { status: 'canceled', canceledAt: now, periodEnd: now, stateVersion: { increment: 1 } },
  });
  if (canceled.count === 1) await recordChange(tx, accessId);
}

/**
 * A human has claimed the agent: what it bought while unowned becomes the human's (a new account
 * write then carries the buyer, and the verified email where the plan asks for it), and the free
 * plans it took count as taken by the human, so the human's other agents do not take them again. The claim has written the
 * agent's row first, which a purchase opening an account takes turns on (holders.ts ›
 * agentOwnerForPurchase): one in progress is adopted here, a later one reads the new owner.
 */
export async function adoptAccounts(tx: Tx, agentId: string, buyerId: string): Promise<void> {
  const unowned = await tx.access.findMany({ where: { agentId, buyerId: null }, select: { id: true } });
  for (const { id } of unowned) {
    await tx.access.update({ where: { id }, data: { buyerId, stateVersion: { increment: 1 } } });
    await recordChange(tx, id);
  }
  const taken = await tx.trialClaim.findMany({ where: { takerId: agentId } });
  const already = new Set(
    (await tx.trialClaim.findMany({ where: { takerId: buyerId, planId: { in: taken.map((c) => c.planId) } } })).map((c) => c.planId),
  );
  for (const claim of taken.filter((c) => !already.has(c.planId))) {
    await tx.trialClaim.create({ data: { planId: claim.planId, takerId: buyerId, accessId: claim.accessId } });
  }
}

/** For a stateful seller, leaves the account write of a change that has just raised the version. */
export async function recordChange(tx: Tx, accessId: string): Promise<void> {
  const access = await tx.access.findUniqueOrThrow({
    where: { id: accessId },
    include: { seller: { select: { stateful: true } }, plan: true, buyer: { select: { email: true, emailVerifiedAt: true } } },
  });
  if (!access.seller.stateful) return;
  const snapshot: AccountSnapshot = {
    accessId,
    agentId: access.agentId,
    buyerId: access.buyerId,
    buyerEmail: emailForSeller(access.plan.verifiedEmailPolicy, access.buyer),
    stateVersion: access.stateVersion,
    plan: {
      slug: access.plan.slug,
      name: access.plan.name,
      billingMode: access.plan.billingMode,
      interval: access.plan.interval,
      basePriceMicros: access.plan.basePriceMicros,
    },
    period: { start: access.periodStart ?? access.createdAt, end: access.periodEnd },
    creditGrantedMicros: access.creditGrantedMicros,
    creditReversedMicros: access.creditReversedMicros,
    status: access.status === 'suspended' ? 'suspended' : 'active',
  };
  await tx.accountWrite.create({
    data: {
      id: newId('accountWrite'),
      accessId,
      kind: 'write',
      stateVersion: access.stateVersion,
      bodyJson: serializeSnapshot(snapshot),
      status: 'pending',
    },
  });
}

/** Credit an account opens with: null when its plan has no credit component. */
function grantedCredit(plan: PurchasePlan, bought: bigint): bigint | null {
  if (plan.billingMode === 'credit') return plan.includedCreditMicros + bought;
  return plan.includedCreditMicros > 0n ? plan.includedCreditMicros : null;
}
