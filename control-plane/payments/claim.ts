import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { STRANDED_CALL_MS_DEFAULT } from '../../shared/config.js';
import type { ClaimedPayment, ClaimInput } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { BATCH_SETTLEMENT_SCHEME } from '../../shared/payments/batch-settlement.js';
import type { Db } from '../db/client.js';
import { sqlOf } from '../db/sql.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator.js';
import { claimSessionPayment } from '../sessions/claim-session.js';
import { claimAttempt, openAttempt } from './attempt-claim.js';
import { readAttempt } from './attempt-rows.js';
import { type PaymentRails, railOf } from './rails.js';
import { attemptRequirements } from './requirements.js';

/**
 * Admits a paid retry: it must be the challenged request byte for byte, its payment must verify
 * against the attempt's own requirements, and then it claims the attempt. The claim
 * (`challenge_created → in_flight` plus the replay row for `(payer, nonce)`, whose unique index
 * refuses a second) is one transaction, so across any number of proxies exactly one retry per
 * payment is forwarded.
 */
export async function claimPaidRequest(
  db: Db,
  rails: PaymentRails,
  input: ClaimInput & { amountUsd?: string | undefined },
  { strandedCallMs = STRANDED_CALL_MS_DEFAULT }: { strandedCallMs?: number | undefined } = {},
): Promise<ClaimedPayment> {
  const sql = sqlOf(db);
  // A session's voucher (or deposit) is verified against its channel, in hub (sessions/claim-session.ts),
  // on the rail its attempt was made on.
  // The attempt is read once, here, and handed on.
  if (input.payload.accepted.scheme === BATCH_SETTLEMENT_SCHEME) {
    const read = await readAttempt(sql, input.paymentId);
    // Its channel is held for as long as the call may stay claimed (docs/decisions.md#D-354).
    return claimSessionPayment(db, read && railOf(rails, read), read, input, strandedCallMs);
  }
  // A payment already spent on another attempt is a replay, whatever the chain says of its nonce.
  const authorization = (input.payload.payload as { authorization?: { from?: unknown; nonce?: unknown } }).authorization;
  // Only strings: String() of an object whose toString is not a function throws.
  const nonce = textOf(authorization?.nonce).toLowerCase();
  const claimedPayer = textOf(authorization?.from).toLowerCase();
  const [read, spent] = await Promise.all([
    readAttempt(sql, input.paymentId),
    sql.get<{ paymentAttemptId: string }>(
      Prisma.sql`SELECT "paymentAttemptId" FROM "PaymentReplay" WHERE "payer" = ${claimedPayer} AND "nonce" = ${nonce}`,
    ),
  ]);
  // Verified and claimed on the rail the attempt was made on, whichever a new challenge would use.
  const { attempt, rail, failed } = openAttempt(read, read && railOf(rails, read), input);
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
  if (!verification.isValid) throw failed(verification.reason);
  const payer = verification.payer.toLowerCase();

  return sql.transaction(async (tx) => {
    const claimed = await claimAttempt(tx, attempt, payer, {
      protocol: input.protocol,
      paymentMethod: input.protocol === 'mpp' ? 'mpp_wallet' : 'x402_wallet',
      paymentPayloadJson: JSON.stringify(input.payload),
    });
    // The same signed payment already spent on another attempt (a replay that raced this claim):
    // its replay row exists, and this claim is undone with the transaction.
    const recorded = await tx.run(Prisma.sql`INSERT INTO "PaymentReplay" ("payer", "nonce", "paymentAttemptId", "createdAt")
      VALUES (${payer}, ${nonce}, ${attempt.id}, ${new Date()}) ON CONFLICT ("payer", "nonce") DO NOTHING`);
    if (recorded !== 1) throw new ApiError('payment_request_already_completed');
    return claimed;
  });
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
