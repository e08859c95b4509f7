import { type PaymentAttempt, Prisma } from '../../../generated/prisma/sqlite/client.js';
import type { SettleInput, SettleOutcome } from '../../../shared/contract.js';
import type { Db } from '../../db/client.js';
import { sqlOf } from '../../db/sql.js';
import { toSettleResponse } from '../../facilitator/results.js';
import { settleSessionCall } from '../../sessions/settle-session.js';
import { readAttempt } from '../attempt-rows.js';
import { moveAttempt } from '../attempt-status.js';
import { traceAttempt } from '../attempt-trace.js';
import { paymentSeller } from '../payment-seller.js';
import { type PaymentRails, railOf } from '../rails.js';
import { billingSummary } from './billing.js';
import { planPrices, settledCharge } from './charge.js';
import { settleFromCredit } from './credit-call.js';
import { settleAndRecord, settleInTime } from './record.js';
import { follow } from './under-way.js';

/**
 * Finishes a paid request once the seller answered. Nothing is charged unless the seller
 * delivered a 2xx (the authorization then lapses). After a 2xx, each meter settles at
 * min(reported, authorized): usage reported for the request (from `hub-usage` or a usage report)
 * by the time settlement starts (a report after that is refused: usage/resolve.ts) and, when none
 * was reported, the challenged usage. `exact` to the seller moves the whole
 * authorization, so a smaller charge leaves a remainder credited to the payer; through the escrow
 * (a ceiling-priced call) the remainder goes back to the payer in the same transaction. A charge
 * of zero submits nothing and lets the authorization expire. A settlement whose outcome is
 * unknown stays `settling` and is finished later by the pending loop; it is never
 * submitted as a new payment. A seller that settles after the answer gets `settling` at once, and
 * the settlement follows. Every step is taken on the rail the attempt was made on.
 */
export async function settlePaidRequest(db: Db, rails: PaymentRails, input: SettleInput): Promise<SettleOutcome> {
  const sql = sqlOf(db);
  const attempt = await readAttempt(sql, input.paymentId);
  if (!attempt) throw new Error(`No payment ${input.paymentId} to settle.`);
  // Settled on the rail it was made and claimed on; none when that rail is gone, and the
  // settlement then fails (`rail_not_configured`) rather than go to another.
  const rail = railOf(rails, attempt);
  traceAttempt(attempt, rail);
  const delivered = input.upstreamStatus >= 200 && input.upstreamStatus <= 299;
  if (attempt.protocol === 'credit') return settleFromCredit(db, attempt, delivered, input.upstreamStatus);
  if (attempt.channelId) return settleSessionCall(db, rail, { ...attempt, channelId: attempt.channelId }, delivered, input.upstreamStatus);
  if (!delivered) {
    await moveAttempt(sql, attempt.id, { to: 'released', from: ['in_flight'], set: { chargedMicros: 0n } });
    await sql.run(Prisma.sql`UPDATE "RequestRecord" SET "upstreamStatus" = ${input.upstreamStatus} WHERE "id" = ${attempt.requestId}`);
    return { kind: 'released' };
  }
  if (attempt.kind === 'identity') {
    await moveAttempt(sql, attempt.id, { to: 'delivered', from: ['in_flight'], set: { chargedMicros: 0n } });
    return { kind: 'identity' };
  }

  const seller = await paymentSeller(db, attempt.sellerId);
  const prices = await planPrices(attempt, async () => seller);
  const authorized = attempt.amountMicros;
  // `exact` to the seller moves the whole authorization: what was not charged is the payer's credit.
  // Through the escrow, it goes back to the payer's wallet.
  const remainderHandling = attempt.payoutTo ? 'escrow_returned' : 'credited';
  const started = await sql.transaction(async (tx) => {
    if (!(await moveAttempt(tx, attempt.id, { to: 'settling', from: ['in_flight'] }))) return undefined;
    const charge = await settledCharge(tx, attempt, prices);
    const zero = charge.charged === 0n;
    // Nothing to charge: nothing is submitted, and the authorization lapses.
    if (zero) {
      await moveAttempt(tx, attempt.id, {
        to: 'settled',
        set: { chargedMicros: 0n, remainderHandling: 'escrow_expired', settledAt: new Date() },
      });
    } else {
      await tx.run(Prisma.sql`UPDATE "PaymentAttempt" SET "chargedMicros" = ${charge.charged}, "remainderHandling" = ${remainderHandling}
        WHERE "id" = ${attempt.id}`);
    }
    return charge;
  });
  // Settled already (a settle asked twice): what was recorded is the answer.
  if (!started) return recordedOutcome(db, attempt.id);
  const { charged, adjusted } = started;
  if (charged === 0n) {
    return { kind: 'billed', adjusted, billing: billingSummary('settled', authorized, 0n, 'escrow_expired', null), receipt: null };
  }

  const settling = { ...attempt, chargedMicros: charged };
  const stillSettling: SettleOutcome = {
    kind: 'billed',
    adjusted,
    billing: billingSummary('settling', authorized, charged, remainderHandling, null),
    receipt: null,
  };
  if (seller?.settlement === 'after_response') {
    follow(settleAndRecord(db, rail, settling));
    return stillSettling;
  }
  const result = await settleInTime(db, rail, settling);
  if (!result) return stillSettling;
  if (result.status === 'failed') return { kind: 'failed', settlementReason: result.reason, adjusted };
  const settled = result.status === 'settled';
  return {
    kind: 'billed',
    adjusted,
    billing: billingSummary(settled ? 'settled' : 'settling', authorized, charged, remainderHandling, result.transaction ?? null),
    // The payer as hub recorded it (lowercased), not as the facilitator spelled it.
    receipt: { ...toSettleResponse(result), ...(attempt.payer ? { payer: attempt.payer } : {}) },
  };
}

/** The outcome of a settlement already started by someone else, as recorded now. */
async function recordedOutcome(db: Db, id: string): Promise<SettleOutcome> {
  const attempt = (await readAttempt(sqlOf(db), id)) as PaymentAttempt;
  if (attempt.status === 'released') return { kind: 'released' };
  if (attempt.status === 'delivered') return { kind: 'identity' };
  if (attempt.status === 'failed')
    return { kind: 'failed', settlementReason: attempt.settlementReason ?? 'settlement_failed', adjusted: [] };
  const charged = attempt.chargedMicros ?? attempt.amountMicros;
  const handling = (attempt.remainderHandling ?? 'credited') as Parameters<typeof billingSummary>[3];
  const status = attempt.status === 'settled' ? 'settled' : 'settling';
  return {
    kind: 'billed',
    adjusted: [],
    billing: billingSummary(status, attempt.amountMicros, charged, handling, attempt.settleTxHash),
    receipt: null,
  };
}
