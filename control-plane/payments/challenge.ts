import type { ChallengeInput, IssuedChallenge } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { formatUsd } from '../../shared/money.js';
import { countAttempt } from '../analytics/traffic-rollup.js';
import type { Db } from '../db/client.js';
import { planStanding } from '../storefront/plan-standing.js';
import { priceUsage } from './price.js';
import type { PaymentRail } from './rail.js';
import { attemptRequirements } from './requirements.js';

/**
 * Turns a seller's 402 into a priced challenge: prices the usage, records a payment attempt bound
 * to the request (method, path+query, body digest, request id) and stores the request itself as
 * challenged, so the paid retry forwards under the same request id.
 */
export async function issuePaymentChallenge(db: Db, rail: PaymentRail | undefined, input: ChallengeInput): Promise<IssuedChallenge> {
  // Both read, neither writes: asked side by side.
  const [standingRead, pricedRead] = await Promise.allSettled([
    input.usage.length ? planStanding(db, input) : undefined,
    priceUsage(db, input),
  ]);
  if (standingRead.status === 'rejected') throw standingRead.reason;
  const standing = standingRead.value;
  if (pricedRead.status === 'rejected') {
    const err = pricedRead.reason;
    // Usage no pay-as-you-go plan prices can still be bought as a plan: say which way to go.
    if (err instanceof ApiError && err.code === 'usage_not_priced' && standing?.sells) {
      throw new ApiError('payment_required', standing.reason, { accessId: standing.accessId });
    }
    throw err;
  }
  const priced = pricedRead.value;
  const usage = input.usage.map((u) => ({ meterSlug: u.meterSlug, quantity: u.quantity ?? 0 }));
  const attempt = await newAttempt(db, rail, {
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
  });
  await db.$transaction([
    ...attempt.writes,
    db.requestRecord.upsert({
      where: { id: input.requestId },
      create: {
        id: input.requestId,
        sellerId: input.sellerId,
        serviceId: priced.service.id,
        agentId: input.agentId,
        buyerId: input.buyerId,
        paymentAttemptId: attempt.id,
        method: input.method,
        path: input.pathAndQuery.slice(0, 2048),
        lifecycle: 'challenged',
        upstreamStatus: 402,
        sandbox: input.sandbox,
      },
      update: { lifecycle: 'challenged', upstreamStatus: 402, paymentAttemptId: attempt.id },
    }),
  ]);
  return { ...attempt.challenge({ serviceSlug: priced.service.slug, usage, plan: priced.plan }), standing };
}

type AttemptFields = {
  sellerId: string;
  serviceId: string;
  planId: string | null;
  requestId: string;
  agentId: string | null;
  kind: string;
  method: string;
  pathAndQuery: string;
  bodyDigest: string;
  usageJson: string;
  amountMicros: bigint;
  purchaseJson?: string;
};

/**
 * A payment attempt on the deployment's rail, paid to the seller's wallet, open for the rail's
 * timeout: the statements that record and count it (for the caller's transaction) and the
 * challenge that shows it to the agent. 503 when the hub takes no payments or the seller has no
 * wallet.
 */
export async function newAttempt(db: Db, rail: PaymentRail | undefined, fields: AttemptFields) {
  if (!rail) throw new ApiError('service_unavailable', 'Payments are not configured on this hub.');
  const seller = await db.seller.findUniqueOrThrow({
    where: { id: fields.sellerId },
    select: { organizationId: true, payToAddress: true },
  });
  if (!seller.payToAddress) throw new ApiError('service_unavailable', 'The seller has no payout wallet configured.');
  const payTo = seller.payToAddress;
  const id = newId('paymentAttempt');
  const createdAt = new Date();
  const expiresAt = new Date(+createdAt + rail.maxTimeoutSeconds * 1000);
  const create = db.paymentAttempt.create({
    data: {
      ...fields,
      id,
      organizationId: seller.organizationId,
      rail: rail.name,
      network: rail.network,
      asset: rail.token.address,
      payTo,
      paymentMethod: 'x402_wallet',
      status: 'challenge_created',
      createdAt,
      expiresAt,
    },
  });
  // An identity proof moves no money: it is not a payment attempt in the seller's analytics.
  const priced = fields.kind !== 'identity' && fields.amountMicros > 0n;
  return {
    id,
    writes: priced ? [create, countAttempt(db, fields.sellerId, createdAt)] : [create],
    challenge: (shown: Pick<IssuedChallenge, 'serviceSlug' | 'usage' | 'plan'>): IssuedChallenge => ({
      paymentId: id,
      amountMicros: fields.amountMicros.toString(),
      amountUsd: formatUsd(fields.amountMicros),
      payTo,
      token: { address: rail.token.address, decimals: rail.token.decimals, name: rail.token.name, version: rail.token.version },
      ...shown,
      rail: rail.name,
      network: rail.network,
      requirements: attemptRequirements(rail, { id, amountMicros: fields.amountMicros, payTo }),
      expiresAt: expiresAt.toISOString(),
    }),
  };
}
