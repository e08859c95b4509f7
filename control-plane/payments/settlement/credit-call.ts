import { type PaymentAttempt, Prisma } from '../../../generated/prisma/sqlite/client.js';
import type { SettleOutcome } from '../../../shared/contract.js';
import { countTransaction } from '../../analytics/traffic-rollup.js';
import type { Db } from '../../db/client.js';
import { type Sql, sqlOf } from '../../db/sql.js';
import { moveAttempt } from '../attempt-status.js';
import { returnCredit } from '../credit.js';
import { paymentSeller } from '../payment-seller.js';
import { billingSummary } from './billing.js';
import { planPrices, settledCharge } from './charge.js';

/**
 * A call paid from the payer's credit (challenge.ts drew its price): after a 2xx it is charged
 * what was used and the rest goes back to the credit; any other answer gives it all back. No
 * transaction moves, so there is no receipt. Marked once, so a settle asked twice returns once.
 */
export async function settleFromCredit(
  db: Db,
  attempt: PaymentAttempt,
  delivered: boolean,
  upstreamStatus: number,
): Promise<SettleOutcome> {
  const sql = sqlOf(db);
  if (!delivered) {
    await sql.transaction(async (tx) => {
      await releaseCreditCall(tx, attempt);
      await tx.run(Prisma.sql`UPDATE "RequestRecord" SET "upstreamStatus" = ${upstreamStatus} WHERE "id" = ${attempt.requestId}`);
    });
    return { kind: 'released' };
  }
  const prices = await planPrices(attempt, () => paymentSeller(db, attempt.sellerId));
  const { charged, adjusted } = await sql.transaction(async (tx) => {
    const settled = await moveAttempt(tx, attempt.id, {
      to: 'settled',
      from: ['in_flight'],
      set: { remainderHandling: 'credited', settledAt: new Date() },
    });
    const charge = await settledCharge(tx, attempt, prices);
    if (!settled) return charge;
    await tx.run(Prisma.sql`UPDATE "PaymentAttempt" SET "chargedMicros" = ${charge.charged} WHERE "id" = ${attempt.id}`);
    await returnCredit(tx, attempt, attempt.amountMicros - charge.charged);
    if (charge.charged > 0n) await countTransaction(tx, { ...attempt, chargedMicros: charge.charged });
    return charge;
  });
  const billing = billingSummary('settled', attempt.amountMicros, charged, 'credited', null);
  return { kind: 'billed', adjusted, billing: { ...billing, paidFrom: 'credit' }, receipt: null };
}

/** Releases a credit-paid call still in flight and gives its whole draw back; nothing when it ended already. */
export async function releaseCreditCall(
  tx: Sql,
  attempt: Pick<PaymentAttempt, 'id' | 'sellerId' | 'payer' | 'amountMicros'>,
): Promise<boolean> {
  if (!(await releaseInFlight(tx, attempt.id))) return false;
  await returnCredit(tx, attempt, attempt.amountMicros);
  return true;
}

/** Marks a call still in flight released, nothing charged; false when it ended already. */
export function releaseInFlight(tx: Sql, attemptId: string): Promise<boolean> {
  return moveAttempt(tx, attemptId, { to: 'released', from: ['in_flight'], set: { chargedMicros: 0n } });
}
