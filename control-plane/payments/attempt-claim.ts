import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { ClaimedPayment, ClaimInput } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { parseUsd } from '../../shared/money.js';
import type { Sql } from '../db/sql.js';
import type { Attempt } from './attempt-rows.js';
import { type AttemptStatus, moveAttempt } from './attempt-status.js';
import { traceAttempt } from './attempt-trace.js';
import type { PaymentRail } from './rail.js';

/**
 * The two halves every paid retry's claim shares, whichever way its payment is verified (an
 * `exact` authorization in claim.ts, a session's voucher in sessions/claim-session.ts): whether
 * the attempt it names may be paid now, and claiming it once the payment verified.
 */

export const COMPLETED = new Set<AttemptStatus>(['delivered', 'holding', 'reserved', 'settling', 'settled']);

/** Attempts that pay for an account rather than a call (control-plane/storefront/purchase.ts). */
export const PURCHASE_KINDS = new Set(['purchase', 'renewal', 'topup']);

/**
 * The attempt a paid retry names, if it may be paid now: the challenged request byte for byte,
 * still waiting for its payment, not expired, made on a rail this hub has (`rail`, the attempt's
 * own). Refusals throw; `failed` makes the payment-failure refusal of this attempt (identity
 * challenges say `identity_invalid`).
 */
export function openAttempt(
  attempt: Attempt | undefined,
  rail: PaymentRail | undefined,
  input: ClaimInput & { amountUsd?: string | undefined },
): { attempt: Attempt & { payTo: string }; rail: PaymentRail; failed: (settlementReason: string) => ApiError } {
  const failed = (settlementReason: string, identity = false) =>
    new ApiError('payment_required', identity ? 'identity_invalid' : 'settlement_failed', { settlementReason });
  if (!attempt?.payTo) throw failed('unknown_payment');
  traceAttempt(attempt, rail);
  const identity = attempt.kind === 'identity';

  refuseUnbound(attempt, input);
  if (attempt.status === 'in_flight') throw new ApiError('payment_request_in_flight');
  if (COMPLETED.has(attempt.status)) throw new ApiError('payment_request_already_completed');
  if (attempt.status !== 'challenge_created') throw failed(attempt.settlementReason ?? 'payment_closed', identity);
  if (attempt.expiresAt && attempt.expiresAt.getTime() < Date.now()) throw failed('challenge_expired', identity);
  // Made on a rail this hub no longer has: paid on no other (rails.ts › railOf); a fresh challenge
  // is made on one it has.
  if (!rail) throw failed('rail_not_configured', identity);
  return { attempt: attempt as Attempt & { payTo: string }, rail, failed: (reason) => failed(reason, identity) };
}

/**
 * A paid retry must repeat the challenged request byte for byte, at the pay URL that challenged it
 * (409 `payment_request_mismatch`): a payment made at one seller, a sandbox one say, unlocks
 * nothing at another. A purchase retried with another amount than the one paid for says so.
 */
export function refuseUnbound(
  attempt: Pick<Attempt, 'sellerId' | 'method' | 'pathAndQuery' | 'bodyDigest' | 'kind' | 'purchaseJson'>,
  input: Pick<ClaimInput, 'sellerId' | 'method' | 'pathAndQuery' | 'bodyDigest'> & { amountUsd?: string | undefined },
): void {
  if (attempt.sellerId !== input.sellerId)
    throw new ApiError('payment_request_mismatch', 'This payment was challenged at another pay URL: retry it where it was challenged.');
  if (attempt.method === input.method && attempt.pathAndQuery === input.pathAndQuery && attempt.bodyDigest === input.bodyDigest) return;
  if (PURCHASE_KINDS.has(attempt.kind) && boughtCredit(attempt.purchaseJson) !== retriedCredit(input.amountUsd)) {
    throw new ApiError(
      'payment_amount_mismatch',
      'amountUsd differs from the paid challenge: retry with the body you were challenged for.',
    );
  }
  throw new ApiError('payment_request_mismatch');
}

/**
 * Claims a verified payment's attempt (`challenge_created → in_flight`), in the caller's
 * transaction, and forwards the request as the paying wallet's agent. A claim that finds the
 * attempt taken already is refused, and the transaction undone.
 */
export async function claimAttempt(
  tx: Sql,
  attempt: Attempt,
  payer: string,
  set: { protocol: string; paymentMethod: string; paymentPayloadJson: string; channelId?: string; settleTxHash?: string },
): Promise<ClaimedPayment> {
  // A signed payment proves the wallet: that wallet is the agent this request is made for (and
  // the payment is that agent's from now on: analytics names it).
  const agent = attempt.agentId
    ? await tx.get<AgentRow>(Prisma.sql`SELECT "id", "buyerId" FROM "Agent" WHERE "id" = ${attempt.agentId}`)
    : await walletAgent(tx, payer);
  if (!agent) throw new Error(`Agent ${attempt.agentId} of payment ${attempt.id} is gone.`);
  // paymentMethod: what the agent paid with (a challenge offers both protocols, the retry picks one).
  const claimed = await moveAttempt(tx, attempt.id, {
    to: 'in_flight',
    from: ['challenge_created'],
    set: { ...set, payer, agentId: agent.id, verifiedAt: new Date(), authorizedMicros: attempt.amountMicros },
  });
  if (!claimed) {
    const now = await tx.get<{ status: string }>(Prisma.sql`SELECT "status" FROM "PaymentAttempt" WHERE "id" = ${attempt.id}`);
    throw new ApiError(now?.status === 'in_flight' ? 'payment_request_in_flight' : 'payment_request_already_completed');
  }
  await tx.run(Prisma.sql`UPDATE "RequestRecord" SET "lifecycle" = 'forwarded', "agentId" = ${agent.id}, "buyerId" = ${agent.buyerId},
    "paymentAttemptId" = ${attempt.id} WHERE "id" = ${attempt.requestId}`);
  return { requestId: attempt.requestId, agentId: agent.id, buyerId: agent.buyerId, payer, kind: attempt.kind };
}

type AgentRow = { id: string; buyerId: string | null };

/** The agent of a wallet, made when the wallet is new (another claim may make it first). */
async function walletAgent(tx: Sql, wallet: string): Promise<AgentRow | undefined> {
  const read = () => tx.get<AgentRow>(Prisma.sql`SELECT "id", "buyerId" FROM "Agent" WHERE "walletAddress" = ${wallet}`);
  const known = await read();
  if (known) return known;
  const now = new Date();
  await tx.run(Prisma.sql`INSERT INTO "Agent" ("id", "walletAddress", "createdAt", "updatedAt")
    VALUES (${newId('agent')}, ${wallet}, ${now}, ${now}) ON CONFLICT ("walletAddress") DO NOTHING`);
  return read();
}

function boughtCredit(purchaseJson: string | null): bigint {
  return BigInt((JSON.parse(purchaseJson ?? '{}') as { creditMicros?: string }).creditMicros ?? '0');
}

/** The credit a retried body asks for; an amount that does not parse is no amount at all. */
function retriedCredit(amountUsd: string | undefined): bigint {
  const parsed = parseUsd(amountUsd ?? '0');
  return parsed.ok ? parsed.micros : -1n;
}
