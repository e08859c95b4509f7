import type { ClaimView } from '../../shared/contract.js';
import { newId } from '../../shared/ids.js';
import type { Db } from '../db/client.js';
import { violatedConstraint } from '../db/constraints.js';
import { adoptAccounts } from '../storefront/account-changes.js';

/**
 * What the two links in a claim mail do: the confirmation link claims the agent for the buyer of
 * that email (created on first confirmation, its email then verified), once, within 24 hours;
 * the release link takes the agent back from that buyer while the claim stands. Both only show
 * a page on GET; the change happens on the page's POST.
 */

type ClaimRow = NonNullable<Awaited<ReturnType<typeof findClaim>>>;

function findClaim(db: Pick<Db, 'agentClaim'>, where: { tokenHash: string } | { releaseTokenHash: string }) {
  return db.agentClaim.findUnique({ where, include: { agent: { select: { walletAddress: true, buyerId: true } } } });
}

async function describe(db: Db, claim: ClaimRow, state: ClaimView['state']): Promise<ClaimView> {
  const seller = claim.sellerId ? await db.seller.findUnique({ where: { id: claim.sellerId }, select: { name: true } }) : null;
  return {
    state,
    agentId: claim.agentId,
    walletAddress: claim.agent.walletAddress,
    email: claim.email,
    sellerName: seller?.name ?? null,
    payOrigin: claim.payOrigin,
  };
}

function confirmationState(claim: ClaimRow, now = Date.now()): ClaimView['state'] {
  if (claim.confirmedAt) return 'used';
  if (claim.expiresAt.getTime() <= now) return 'expired';
  if (claim.agent.buyerId) return 'taken';
  return 'open';
}

function releaseState(claim: ClaimRow): ClaimView['state'] {
  if (claim.releasedAt) return 'released';
  if (!claim.confirmedAt || claim.agent.buyerId !== claim.buyerId) return 'unknown';
  return 'confirmed';
}

export async function viewClaim(db: Db, input: { tokenHash: string; link: 'confirm' | 'release' }): Promise<ClaimView> {
  const claim = await findClaim(db, input.link === 'confirm' ? { tokenHash: input.tokenHash } : { releaseTokenHash: input.tokenHash });
  if (!claim) return { state: 'unknown' };
  return describe(db, claim, input.link === 'confirm' ? confirmationState(claim) : releaseState(claim));
}

export async function confirmClaim(db: Db, tokenHash: string): Promise<ClaimView> {
  const claim = await findClaim(db, { tokenHash });
  if (!claim) return { state: 'unknown' };
  const state = confirmationState(claim);
  if (state !== 'open') return describe(db, claim, state);

  const buyerId = await buyerFor(db, claim.email);
  const outcome = await db
    .$transaction(async (tx) => {
      const now = new Date();
      // Conditional on the link being unused and the agent unowned, so a double submit, or two
      // people racing for one agent, claims it once.
      const taken = await tx.agentClaim.updateMany({ where: { id: claim.id, confirmedAt: null }, data: { confirmedAt: now, buyerId } });
      if (taken.count !== 1) return 'used' as const;
      const claimed = await tx.agent.updateMany({ where: { id: claim.agentId, buyerId: null }, data: { buyerId, claimedAt: now } });
      if (claimed.count !== 1) throw new ClaimTaken();
      await adoptAccounts(tx, claim.agentId, buyerId);
      return 'confirmed' as const;
    })
    .catch((err: unknown) => {
      if (err instanceof ClaimTaken) return 'taken' as const;
      throw err;
    });
  return describe(db, claim, outcome);
}

class ClaimTaken extends Error {}

/** The buyer of an email, created verified on first confirmation; a later one verifies it too. */
async function buyerFor(db: Db, email: string): Promise<string> {
  const existing = await db.buyer.findUnique({ where: { email }, select: { id: true, emailVerifiedAt: true } });
  if (existing) {
    if (!existing.emailVerifiedAt) await db.buyer.update({ where: { id: existing.id }, data: { emailVerifiedAt: new Date() } });
    return existing.id;
  }
  try {
    const created = await db.buyer.create({ data: { id: newId('buyer'), email, emailVerifiedAt: new Date() } });
    return created.id;
  } catch (err) {
    // Two confirmations for one new address at once: the other created it.
    if (violatedConstraint(err) !== 'unique') throw err;
    return (await db.buyer.findUniqueOrThrow({ where: { email }, select: { id: true } })).id;
  }
}

export async function releaseClaim(db: Db, releaseTokenHash: string): Promise<ClaimView> {
  const claim = await findClaim(db, { releaseTokenHash });
  if (!claim) return { state: 'unknown' };
  const state = releaseState(claim);
  if (state !== 'confirmed') return describe(db, claim, state);
  const released = await db.$transaction(async (tx) => {
    const freed = await tx.agent.updateMany({
      where: { id: claim.agentId, buyerId: claim.buyerId },
      data: { buyerId: null, claimedAt: null },
    });
    await tx.agentClaim.update({ where: { id: claim.id }, data: { releasedAt: new Date() } });
    return freed.count === 1;
  });
  return describe(db, claim, released ? 'released' : 'unknown');
}
