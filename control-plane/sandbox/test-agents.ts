import { randomBytes } from 'node:crypto';
import { type Hex, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { openSecret, sealSecret } from '../../shared/secret-box.js';
import { hashToken, newToken } from '../../shared/tokens.js';
import type { Db } from '../db/client.js';
import { type PaymentRails, railFor } from '../payments/rails.js';
import { refuseLive } from './sandbox-seller.js';

/**
 * Test agents: ordinary agents (an Agent row with a wallet and a bearer token, as registration
 * makes) whose wallet hub made on the test rail and funded from its faucet, and whose key and token
 * hub keeps sealed, so the sandbox routes can pay and call as them (docs/decisions.md#D-230).
 */
export type TestAgent = { agentId: string; sellerId: string; slug: string; walletAddress: Hex; privateKey: Hex; token: string };

export async function createTestAgent(db: Db, masterKey: Buffer, rails: PaymentRails, sellerId: string, fundMicros: bigint) {
  // The rail its sandbox seller's challenges are made on, where its wallet pays.
  const rail = railFor(rails, { sandbox: true });
  if (!rail?.test || !rail.faucet)
    throw new ApiError(
      'service_unavailable',
      'Test agents are funded from the test rail’s faucet, and this hub has none: only a local chain has one (hub chain up; beside a live rail, name it with HUB_CHAIN_FILE).',
    );
  const privateKey = toHex(randomBytes(32));
  const walletAddress = privateKeyToAccount(privateKey).address;
  const token = newToken('agent');
  const agentId = newId('agent');
  // Funded first: an agent whose wallet could not be funded is never made.
  const fundTransaction = fundMicros > 0n ? await rail.faucet(walletAddress, fundMicros) : null;
  await db.agent.create({
    data: {
      id: agentId,
      walletAddress: walletAddress.toLowerCase(),
      tokenHash: hashToken(token),
      sandbox: {
        create: { sellerId, encryptedPrivateKey: sealSecret(masterKey, privateKey), encryptedToken: sealSecret(masterKey, token) },
      },
    },
  });
  return { agentId, walletAddress, token, fundTransaction };
}

/** A test agent of the organization's sandbox seller, with its key and token opened; 404 otherwise. */
export async function ownedTestAgent(db: Db, masterKey: Buffer, organizationId: string, agentId: string): Promise<TestAgent> {
  const row = await db.sandboxAgent.findUnique({
    where: { agentId },
    include: { seller: { select: { organizationId: true, sandbox: true, slug: true } } },
  });
  if (!row || row.seller.organizationId !== organizationId) throw new ApiError('test_agent_not_found');
  refuseLive(row.seller);
  const privateKey = openSecret(masterKey, row.encryptedPrivateKey) as Hex;
  return {
    agentId,
    sellerId: row.sellerId,
    slug: row.seller.slug,
    walletAddress: privateKeyToAccount(privateKey).address,
    privateKey,
    token: openSecret(masterKey, row.encryptedToken),
  };
}
