import type { Prisma } from '../../generated/prisma/sqlite/client.js';

/**
 * The accounts an agent may use, buy more of and get keys for: its own, and those of the human
 * who owns it (`ownerId`, the agent's buyer). One rule for the receipt, `?accessId=`, the 402
 * reasons and key redeem.
 */
export function heldBy(agentId: string, ownerId: string | null): Prisma.AccessWhereInput {
  return { OR: [{ agentId }, ...(ownerId ? [{ buyerId: ownerId }] : [])] };
}

/**
 * The agent's owner, read as a purchase must see it. A claim confirmed at the same moment writes
 * the agent's row and then adopts the accounts and free plans the agent has; a purchase read
 * before that write committed, and committing after the adoption looked, would open an account
 * without its owner or take a free plan for the agent alone. So the purchase takes turns with the
 * claim on the agent's row first (a write that changes nothing takes PostgreSQL's row lock until
 * commit; SQLite runs one transaction at a time anyway) and reads the owner after it.
 */
export async function agentOwnerForPurchase(tx: Prisma.TransactionClient, agentId: string) {
  await tx.$executeRaw`UPDATE "Agent" SET "buyerId" = "buyerId" WHERE "id" = ${agentId}`;
  return tx.agent.findUniqueOrThrow({
    where: { id: agentId },
    select: { buyerId: true, claimedAt: true, buyer: { select: { emailVerifiedAt: true } } },
  });
}

/** The email a seller may be told of a buyer: only one the buyer has verified. */
export function verifiedEmail(buyer: { email: string | null; emailVerifiedAt: Date | null } | null): string | null {
  return buyer?.emailVerifiedAt ? buyer.email : null;
}
