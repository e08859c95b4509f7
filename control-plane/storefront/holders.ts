import type { Prisma } from '../../generated/prisma/sqlite/client.js';

/**
 * The accounts an agent may use, buy more of and get keys for: its own, and those of the human
 * who owns it (`ownerId`, the agent's buyer). One rule for the receipt, `?accessId=`, the 402
 * reasons and key redeem.
 */
export function heldBy(agentId: string, ownerId: string | null): Prisma.AccessWhereInput {
  return { OR: [{ agentId }, ...(ownerId ? [{ buyerId: ownerId }] : [])] };
}

/** The email a seller may be told of a buyer: only one the buyer has verified. */
export function verifiedEmail(buyer: { email: string | null; emailVerifiedAt: Date | null } | null): string | null {
  return buyer?.emailVerifiedAt ? buyer.email : null;
}
