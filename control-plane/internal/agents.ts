import { isAddress, isHex, recoverMessageAddress } from 'viem';
import type { AgentIdentity, Registration, RegistrationChallenge } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { hashToken, newToken } from '../../shared/tokens.js';
import type { Db } from '../db/client.js';

/**
 * Agent credentials at the pay URL. An agent proves control of a wallet by signing a one-time
 * challenge (EIP-191 personal message) and receives a bearer token; only its hash is kept.
 * Registering the same wallet again issues a new token and revokes the old one.
 */
export const CHALLENGE_LIFETIME_MS = 10 * 60 * 1000;

export async function agentByTokenHash(db: Db, tokenHash: string): Promise<AgentIdentity | null> {
  const agent = await db.agent.findUnique({
    where: { tokenHash },
    select: {
      id: true,
      buyerId: true,
      claimedAt: true,
      buyer: { select: { emailVerifiedAt: true } },
      sandbox: { select: { sellerId: true } },
    },
  });
  if (!agent) return null;
  return {
    agentId: agent.id,
    buyerId: agent.buyerId,
    claimed: agent.claimedAt !== null,
    emailVerified: Boolean(agent.buyerId && agent.buyer?.emailVerifiedAt),
    sandboxSellerId: agent.sandbox?.sellerId ?? null,
  };
}

/** Agents whose cached identity may be stale (owner or token changed) since `since`, for the proxy's cache. */
export async function agentsChangedSince(db: Db, since: string | null): Promise<{ now: string; agentIds: string[] }> {
  const now = new Date();
  if (!since) return { now: now.toISOString(), agentIds: [] };
  // A little overlap: a write committed just before `since` with an earlier clock is not missed.
  const from = new Date(new Date(since).getTime() - 2_000);
  const rows = await db.agent.findMany({ where: { updatedAt: { gte: from } }, select: { id: true }, take: 10_000 });
  return { now: now.toISOString(), agentIds: rows.map((r) => r.id) };
}

export type RegistrationFailure = 'invalid_wallet' | 'unknown_challenge' | 'challenge_expired' | 'challenge_used' | 'invalid_signature';

export async function createRegistrationChallenge(
  db: Db,
  input: { walletAddress: string; sellerSlug: string },
): Promise<RegistrationChallenge> {
  if (!isAddress(input.walletAddress, { strict: false })) throw new ApiError('invalid_request', 'invalid_wallet');
  const walletAddress = input.walletAddress.toLowerCase();
  const id = newId('registrationChallenge');
  const issuedAt = new Date();
  const expiresAt = new Date(issuedAt.getTime() + CHALLENGE_LIFETIME_MS);
  const message = [
    'Register this wallet as an agent with hub.',
    `Seller: ${input.sellerSlug}`,
    `Wallet: ${walletAddress}`,
    `Challenge: ${id}`,
    `Issued: ${issuedAt.toISOString()}`,
    `Expires: ${expiresAt.toISOString()}`,
  ].join('\n');
  await db.agentRegistrationChallenge.create({ data: { id, walletAddress, message, expiresAt } });
  return { challengeId: id, message, expiresAt: expiresAt.toISOString() };
}

export async function completeRegistration(db: Db, input: { challengeId: string; signature: string }): Promise<Registration> {
  // The proxy adds how to register to the refusal (its auth block names the pay URL's paths).
  const fail = (reason: RegistrationFailure) => new ApiError('bearer_required', reason);
  const challenge = await db.agentRegistrationChallenge.findUnique({ where: { id: input.challengeId } });
  if (!challenge) throw fail('unknown_challenge');
  if (challenge.usedAt) throw fail('challenge_used');
  if (challenge.expiresAt.getTime() < Date.now()) throw fail('challenge_expired');
  if (!isHex(input.signature) || input.signature.length !== 132) throw fail('invalid_signature');

  let signer: string;
  try {
    signer = (await recoverMessageAddress({ message: challenge.message, signature: input.signature })).toLowerCase();
  } catch {
    throw fail('invalid_signature');
  }
  if (signer !== challenge.walletAddress) throw fail('invalid_signature');

  const token = newToken('agent');
  const tokenHash = hashToken(token);
  const agent = await db.$transaction(async (tx) => {
    // Claiming the challenge inside the transaction makes it single-use even under races.
    const claimed = await tx.agentRegistrationChallenge.updateMany({
      where: { id: challenge.id, usedAt: null },
      data: { usedAt: new Date() },
    });
    if (claimed.count !== 1) return null;
    return tx.agent.upsert({
      where: { walletAddress: challenge.walletAddress },
      create: { id: newId('agent'), walletAddress: challenge.walletAddress, tokenHash },
      update: { tokenHash },
    });
  });
  if (!agent) throw fail('challenge_used');
  return { agentId: agent.id, buyerId: agent.buyerId, walletAddress: agent.walletAddress, token };
}
