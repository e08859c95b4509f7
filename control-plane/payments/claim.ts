import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { ClaimedPayment, ClaimInput } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { parseUsd } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { type Sql, sqlOf } from '../db/sql.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator.js';
import { type Attempt, readAttempt } from './attempt-rows.js';
import { type AttemptStatus, moveAttempt } from './attempt-status.js';
import { traceAttempt } from './attempt-trace.js';
import type { PaymentRail } from './rail.js';
import { attemptRequirements } from './requirements.js';

export const COMPLETED = new Set<AttemptStatus>(['delivered', 'holding', 'reserved', 'settling', 'settled']);

/** Attempts that pay for an account rather than a call (control-plane/storefront/purchase.ts). */
export const PURCHASE_KINDS = new Set(['purchase', 'renewal', 'topup']);

/**
 * Admits a paid retry: it must be the challenged request byte for byte, its payment must verify
 * against the attempt's own requirements, and then it claims the attempt. The claim
 * (`challenge_created → in_flight` plus the replay row for `(payer, nonce)`, whose unique index
 * refuses a second) is one transaction, so across any number of proxies exactly one retry per
 * payment is forwarded.
 */
export async function claimPaidRequest(
  db: Db,
  rail: PaymentRail | undefined,
  input: ClaimInput & { amountUsd?: string | undefined },
): Promise<ClaimedPayment> {
  const failed = (settlementReason: string, identity = false) =>
    new ApiError('payment_required', identity ? 'identity_invalid' : 'settlement_failed', { settlementReason });
  // A payment already spent on another attempt is a replay, whatever the chain says of its nonce.
  const authorization = (input.payload.payload as { authorization?: { from?: unknown; nonce?: unknown } }).authorization;
  // Only strings: String() of an object whose toString is not a function throws.
  const nonce = textOf(authorization?.nonce).toLowerCase();
  const claimedPayer = textOf(authorization?.from).toLowerCase();
  const sql = sqlOf(db);
  const [attempt, spent] = await Promise.all([
    readAttempt(sql, input.paymentId),
    sql.get<{ paymentAttemptId: string }>(
      Prisma.sql`SELECT "paymentAttemptId" FROM "PaymentReplay" WHERE "payer" = ${claimedPayer} AND "nonce" = ${nonce}`,
    ),
  ]);
  if (!attempt || !rail || !attempt.payTo) throw failed('unknown_payment');
  traceAttempt(attempt, rail);
  const identity = attempt.kind === 'identity';

  refuseUnbound(attempt, input);
  if (attempt.status === 'in_flight') throw new ApiError('payment_request_in_flight');
  if (COMPLETED.has(attempt.status)) throw new ApiError('payment_request_already_completed');
  if (attempt.status !== 'challenge_created') throw failed(attempt.settlementReason ?? 'payment_closed', identity);
  if (attempt.expiresAt && attempt.expiresAt.getTime() < Date.now()) throw failed('challenge_expired', identity);

  if (spent && spent.paymentAttemptId !== attempt.id) throw new ApiError('payment_request_already_completed');

  const requirements = attemptRequirements(rail, { id: attempt.id, amountMicros: attempt.amountMicros, payTo: attempt.payTo });
  const verification = await rail.facilitator.verify(input.payload, requirements).catch((err: unknown) => {
    // The chain or the facilitator did not answer: not the payer's fault, and the payment is untouched.
    if (err instanceof FacilitatorUnavailableError) {
      throw new ApiError(
        'service_unavailable',
        'The payment could not be verified: the chain did not answer. Send the same payment again shortly.',
      );
    }
    throw err;
  });
  if (!verification.isValid) throw failed(verification.reason, identity);
  const payer = verification.payer.toLowerCase();

  return sql.transaction(async (tx) => {
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
      set: {
        payer,
        agentId: agent.id,
        protocol: input.protocol,
        paymentMethod: input.protocol === 'mpp' ? 'mpp_wallet' : 'x402_wallet',
        paymentPayloadJson: JSON.stringify(input.payload),
        verifiedAt: new Date(),
        authorizedMicros: attempt.amountMicros,
      },
    });
    if (!claimed) {
      const now = await tx.get<{ status: string }>(Prisma.sql`SELECT "status" FROM "PaymentAttempt" WHERE "id" = ${attempt.id}`);
      throw new ApiError(now?.status === 'in_flight' ? 'payment_request_in_flight' : 'payment_request_already_completed');
    }
    // The same signed payment already spent on another attempt (a replay that raced this claim):
    // its replay row exists, and this claim is undone with the transaction.
    const recorded = await tx.run(Prisma.sql`INSERT INTO "PaymentReplay" ("payer", "nonce", "paymentAttemptId", "createdAt")
      VALUES (${payer}, ${nonce}, ${attempt.id}, ${new Date()}) ON CONFLICT ("payer", "nonce") DO NOTHING`);
    if (recorded !== 1) throw new ApiError('payment_request_already_completed');
    await tx.run(Prisma.sql`UPDATE "RequestRecord" SET "lifecycle" = 'forwarded', "agentId" = ${agent.id}, "buyerId" = ${agent.buyerId},
      "paymentAttemptId" = ${attempt.id} WHERE "id" = ${attempt.requestId}`);
    return { requestId: attempt.requestId, agentId: agent.id, buyerId: agent.buyerId, payer, kind: attempt.kind };
  });
}

/**
 * A paid retry must repeat the challenged request byte for byte (409 `payment_request_mismatch`);
 * a purchase retried with another amount than the one paid for says so.
 */
export function refuseUnbound(
  attempt: Pick<Attempt, 'method' | 'pathAndQuery' | 'bodyDigest' | 'kind' | 'purchaseJson'>,
  input: Pick<ClaimInput, 'method' | 'pathAndQuery' | 'bodyDigest'> & { amountUsd?: string | undefined },
): void {
  if (attempt.method === input.method && attempt.pathAndQuery === input.pathAndQuery && attempt.bodyDigest === input.bodyDigest) return;
  if (PURCHASE_KINDS.has(attempt.kind) && boughtCredit(attempt.purchaseJson) !== retriedCredit(input.amountUsd)) {
    throw new ApiError(
      'payment_amount_mismatch',
      'amountUsd differs from the paid challenge: retry with the body you were challenged for.',
    );
  }
  throw new ApiError('payment_request_mismatch');
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

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
