import type { ChallengeInput, IssuedChallenge } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { formatUsd } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { priceUsage } from './price.js';
import type { PaymentRail } from './rail.js';
import { attemptRequirements } from './requirements.js';

/**
 * Turns a seller's 402 into a priced challenge: prices the usage, records a payment attempt bound
 * to the request (method, path+query, body digest, request id) and stores the request itself as
 * challenged, so the paid retry forwards under the same request id.
 */
export async function issuePaymentChallenge(db: Db, rail: PaymentRail | undefined, input: ChallengeInput): Promise<IssuedChallenge> {
  const priced = await priceUsage(db, input);
  if (!rail) throw new ApiError('service_unavailable', 'Payments are not configured on this hub.');
  const seller = await db.seller.findUniqueOrThrow({ where: { id: input.sellerId }, select: { organizationId: true, payToAddress: true } });
  if (!seller.payToAddress) throw new ApiError('service_unavailable', 'The seller has no payout wallet configured.');

  const id = newId('paymentAttempt');
  const now = new Date();
  const usage = input.usage.map((u) => ({ meterSlug: u.meterSlug, quantity: u.quantity ?? 0 }));
  await db.$transaction([
    db.paymentAttempt.create({
      data: {
        id,
        organizationId: seller.organizationId,
        sellerId: input.sellerId,
        serviceId: priced.service.id,
        planId: priced.plan?.id ?? null,
        requestId: input.requestId,
        agentId: input.agentId,
        kind: usage.length ? 'call' : 'identity',
        method: input.method,
        pathAndQuery: input.pathAndQuery,
        bodyDigest: input.bodyDigest,
        usageJson: JSON.stringify(usage),
        amountMicros: priced.amountMicros,
        rail: rail.name,
        network: rail.network,
        asset: rail.token.address,
        payTo: seller.payToAddress,
        paymentMethod: 'x402_wallet',
        status: 'challenge_created',
        expiresAt: new Date(now.getTime() + rail.maxTimeoutSeconds * 1000),
      },
    }),
    db.requestRecord.upsert({
      where: { id: input.requestId },
      create: {
        id: input.requestId,
        sellerId: input.sellerId,
        serviceId: priced.service.id,
        agentId: input.agentId,
        buyerId: input.buyerId,
        paymentAttemptId: id,
        method: input.method,
        path: input.pathAndQuery.slice(0, 2048),
        lifecycle: 'challenged',
        upstreamStatus: 402,
        sandbox: input.sandbox,
      },
      update: { lifecycle: 'challenged', upstreamStatus: 402, paymentAttemptId: id },
    }),
  ]);

  return {
    paymentId: id,
    amountMicros: priced.amountMicros.toString(),
    amountUsd: formatUsd(priced.amountMicros),
    payTo: seller.payToAddress,
    token: { address: rail.token.address, decimals: rail.token.decimals, name: rail.token.name, version: rail.token.version },
    serviceSlug: priced.service.slug,
    usage,
    plan: priced.plan,
    rail: rail.name,
    network: rail.network,
    requirements: attemptRequirements(rail, { id, amountMicros: priced.amountMicros, payTo: seller.payToAddress }),
    expiresAt: new Date(now.getTime() + rail.maxTimeoutSeconds * 1000).toISOString(),
  };
}
