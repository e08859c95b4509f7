import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { ChallengeInput, ChallengeOutcome, IssuedChallenge, PaidFromCredit, PlanStanding } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { formatUsd } from '../../shared/money.js';
import { countAttempt } from '../analytics/traffic-rollup.js';
import type { Db } from '../db/client.js';
import { insertInto, runEach, sqlOf } from '../db/sql.js';
import { sessionRequirements, sessionsOffered } from '../sessions/session-requirements.js';
import type { AttemptStatus } from './attempt-status.js';
import { creditBalance, drawCredit } from './credit.js';
import { type PaymentSeller, paymentSeller } from './payment-seller.js';
import { priceUsage } from './price.js';
import { type PaymentRails, railFor } from './rails.js';
import { attemptRequirements } from './requirements.js';
import { refuseLiveRailForSandbox } from './test-rail.js';

/**
 * Why an identified agent's call was not covered by a plan (storefront/plan-standing.ts): asked
 * by the challenge for its reason, passed in by the caller, since accounts build on payments.
 */
export type StandingOf = (db: Db, seller: PaymentSeller, input: ChallengeInput) => Promise<PlanStanding | undefined>;

/**
 * Turns a seller's 402 into a priced challenge: prices the usage, records a payment attempt bound
 * to the request (method, path+query, body digest, request id) and stores the request itself as
 * challenged, so the paid retry forwards under the same request id.
 */
export async function issuePaymentChallenge(
  db: Db,
  rails: PaymentRails,
  input: ChallengeInput,
  planStanding: StandingOf,
): Promise<ChallengeOutcome> {
  const seller = await paymentSeller(db, input.sellerId);
  if (!seller) throw new ApiError('usage_not_priced', 'The seller is gone.');
  // Both read, neither writes: asked side by side.
  const [standingRead, pricedRead] = await Promise.allSettled([
    input.usage.length ? planStanding(db, seller, input) : undefined,
    priceUsage(seller, input),
  ]);
  if (standingRead.status === 'rejected') throw standingRead.reason;
  const standing = standingRead.value;
  if (pricedRead.status === 'rejected') {
    const err = pricedRead.reason;
    // Usage no pay-as-you-go plan prices can still be bought as a plan: say which way to go.
    if (err instanceof ApiError && err.code === 'usage_not_priced' && standing?.sells) {
      return { kind: 'plan_to_buy', reason: standing.reason, accessId: standing.accessId };
    }
    throw err;
  }
  const priced = pricedRead.value;
  // What the payment authorizes per meter: the quantity asked, or the ceiling an item without one is priced at.
  const usage = priced.items.map((i) => ({ meterSlug: i.meterSlug, quantity: i.quantity }));
  const fields: AttemptFields = {
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
    ceiling: priced.ceiling,
  };
  if (input.agentId && usage.length && priced.amountMicros > 0n && input.useCredit !== false) {
    const paid = await payFromCredit(db, rails, seller, input, fields);
    if (paid) return paid;
  }
  const attempt = await newAttempt(db, rails, fields, seller);
  await sqlOf(db).transaction((tx) => runEach(tx, attempt.statements([challengedRecord(input, priced.service.id, attempt.id)])));
  const challenge = attempt.challenge({ serviceSlug: priced.service.slug, usage, plan: priced.plan });
  // A session pays a call into the payer's channel with the seller's wallet as receiver.
  const sessions =
    seller.x402Schemes.includes('batch-settlement') && fields.kind === 'call' ? await sessionsOffered(attempt.rail) : undefined;
  const session =
    sessions && seller.payToAddress
      ? {
          sessionRequirements: sessionRequirements(sessions, {
            id: attempt.id,
            amountMicros: fields.amountMicros,
            receiver: seller.payToAddress,
          }),
        }
      : {};
  return { kind: 'challenge', challenge: { ...challenge, ...session, standing } };
}

/**
 * An identified agent whose wallet's credit with the seller covers the whole price pays from it:
 * the draw, the attempt (already `in_flight`, as a verified payment's is) and the request's record
 * are one transaction, so two calls cannot spend the same credit. Undefined when the credit does
 * not cover it (or another call took it first): the call is challenged as usual.
 */
async function payFromCredit(
  db: Db,
  rails: PaymentRails,
  seller: PaymentSeller,
  input: ChallengeInput,
  fields: AttemptFields,
): Promise<PaidFromCredit | undefined> {
  const sql = sqlOf(db);
  const agent = await sql.get<{ walletAddress: string }>(Prisma.sql`SELECT "walletAddress" FROM "Agent" WHERE "id" = ${input.agentId}`);
  if (!agent || (await creditBalance(sql, input.sellerId, agent.walletAddress)) < fields.amountMicros) return undefined;
  const attempt = await newAttempt(
    db,
    rails,
    { ...fields, status: 'in_flight', protocol: 'credit', paymentMethod: 'credit', payer: agent.walletAddress, verifiedAt: new Date() },
    seller,
  );
  const paid = await sql.transaction(async (tx) => {
    if (
      !(await drawCredit(tx, {
        sellerId: input.sellerId,
        payer: agent.walletAddress,
        micros: fields.amountMicros,
        paymentAttemptId: attempt.id,
      }))
    )
      return false;
    await runEach(tx, attempt.statements([challengedRecord(input, fields.serviceId, attempt.id)]));
    return true;
  });
  if (!paid) return undefined;
  return {
    kind: 'paid_from_credit',
    paymentId: attempt.id,
    amountUsd: formatUsd(fields.amountMicros),
    claimed: { requestId: input.requestId, agentId: input.agentId!, buyerId: input.buyerId, payer: agent.walletAddress, kind: 'call' },
  };
}

/** The request's record, stored (or moved) as challenged, with the attempt that stands behind it. */
function challengedRecord(input: ChallengeInput, serviceId: string, paymentAttemptId: string): Prisma.Sql {
  const record = insertInto('RequestRecord', {
    id: input.requestId,
    sellerId: input.sellerId,
    serviceId,
    agentId: input.agentId,
    buyerId: input.buyerId,
    paymentAttemptId,
    method: input.method,
    path: input.pathAndQuery.slice(0, 2048),
    lifecycle: 'challenged',
    upstreamStatus: 402,
    sandbox: input.sandbox,
    mode: 'paid',
    createdAt: new Date(),
  });
  return Prisma.sql`${record} ON CONFLICT ("id") DO UPDATE SET "lifecycle" = 'challenged', "upstreamStatus" = 402,
    "paymentAttemptId" = excluded."paymentAttemptId"`;
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
  /** Priced at a ceiling: paid into the rail's escrow, which pays the seller what was used. */
  ceiling?: boolean;
  /**
   * A stateful seller's purchase: paid into the rail's escrow and held there until the seller has
   * the account, then paid out whole, or returned to the payer (settlement/hold.ts).
   */
  held?: boolean;
  purchaseJson?: string;
  /** A payment made already (from credit): not a challenge waiting for one. */
  status?: Extract<AttemptStatus, 'in_flight'>;
  protocol?: 'credit';
  paymentMethod?: 'credit';
  payer?: string;
  verifiedAt?: Date;
};

/**
 * A payment attempt on the seller's rail (a sandbox seller's is the test rail: rails.ts ›
 * `railFor`), which it records (`network`, `asset`) for every later step to go to, paid to the
 * seller's wallet (or, priced at a ceiling, to the rail's escrow, which pays the seller's wallet
 * what was used), open for the rail's timeout: the statements that record and count it (for the
 * caller's transaction) and the challenge that shows it to the agent. 503 when the hub takes no
 * payments (or, for a sandbox seller, none on a test rail), the seller has no wallet (unless
 * credit pays), or a ceiling or a held purchase must be paid on a rail without an escrow
 * (`capped_pricing_unavailable`, `held_payment_unavailable`).
 * `seller` is the attempt's, when the caller read it already.
 */
export async function newAttempt(
  db: Db,
  rails: PaymentRails,
  { ceiling, held, ...fields }: AttemptFields,
  read?: Pick<PaymentSeller, 'organizationId' | 'payToAddress' | 'sandbox'>,
) {
  const seller =
    read ??
    (await db.seller.findUniqueOrThrow({
      where: { id: fields.sellerId },
      select: { organizationId: true, payToAddress: true, sandbox: true },
    }));
  const rail = railFor(rails, seller);
  if (!rail) throw new ApiError('service_unavailable', 'Payments are not configured on this hub.');
  refuseLiveRailForSandbox(rail, seller);
  // Credit moves nothing on chain (the seller was paid when it was credited): it needs no wallet.
  const fromCredit = fields.protocol === 'credit';
  if (!seller.payToAddress && !fromCredit) throw new ApiError('service_unavailable', 'The seller has no payout wallet configured.');
  // Credit pays a ceiling as it pays anything (drawn whole, the unused part given back): no escrow.
  const escrowed = (ceiling === true || held === true) && !fromCredit;
  if (escrowed && !rail.escrow) {
    if (!held) throw new ApiError('capped_pricing_unavailable');
    throw new ApiError(
      'held_payment_unavailable',
      'This seller opens accounts after the payment, so a purchase is held until the seller has the account; this hub settles without an escrow to hold it, so it sells no accounts.',
    );
  }
  const payTo = escrowed ? rail.escrow!.address : seller.payToAddress;
  const id = newId('paymentAttempt');
  const createdAt = new Date();
  const expiresAt = new Date(+createdAt + rail.maxTimeoutSeconds * 1000);
  const data = {
    paymentMethod: 'x402_wallet',
    status: 'challenge_created' satisfies AttemptStatus,
    ...fields,
    id,
    organizationId: seller.organizationId,
    rail: fromCredit ? 'credit' : rail.name,
    network: rail.network,
    asset: rail.token.address,
    payTo,
    payoutTo: escrowed ? seller.payToAddress : null,
    createdAt,
    expiresAt,
  };
  // An identity proof moves no money: it is not a payment attempt in the seller's analytics.
  const priced = fields.kind !== 'identity' && fields.amountMicros > 0n;
  return {
    id,
    /** The rail it is made on. */
    rail,
    /**
     * The statements that record and count it, for one transaction, with `alongside` between the
     * two: the count comes last, as in every transaction that counts (analytics/traffic-rollup.ts
     * › lock order).
     */
    statements: (alongside: Prisma.Sql[] = []) => {
      const create = insertInto('PaymentAttempt', data);
      return priced ? [create, ...alongside, countAttempt(fields.sellerId, createdAt)] : [create, ...alongside];
    },
    challenge: (shown: Pick<IssuedChallenge, 'serviceSlug' | 'usage' | 'plan'>): IssuedChallenge => {
      if (!payTo) throw new Error('A call paid from credit is not challenged.');
      return {
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
      };
    },
  };
}
