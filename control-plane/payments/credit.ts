import { newId } from '../../shared/ids.js';
import type { Db } from '../db/client.js';

type Tx = Pick<Db, 'creditEntry' | 'payerCredit'>;

/**
 * Payers' credit with sellers (docs/decisions.md › Payments › Remainders). x402's `exact` scheme
 * moves the whole authorization on chain; when a call is charged less, the difference reached the
 * seller all the same and is the payer's credit there. Each change is a `CreditEntry` (one per
 * payment and reason, so a settlement finished twice credits once) and moves `PayerCredit`.
 */

type SettledAttempt = { id: string; sellerId: string; payer: string | null; amountMicros: bigint; chargedMicros: bigint | null };

/** Credits what a settled payment moved beyond its charge. Runs in the transaction that marks it settled. */
export async function creditRemainder(tx: Tx, attempt: SettledAttempt): Promise<bigint> {
  const remainder = attempt.amountMicros - (attempt.chargedMicros ?? attempt.amountMicros);
  if (remainder <= 0n || !attempt.payer) return 0n;
  const { sellerId, payer } = attempt;
  await tx.creditEntry.create({
    data: { id: newId('creditEntry'), sellerId, payer, deltaMicros: remainder, reason: 'remainder', paymentAttemptId: attempt.id },
  });
  await tx.payerCredit.upsert({
    where: { sellerId_payer: { sellerId, payer } },
    create: { sellerId, payer, balanceMicros: remainder },
    update: { balanceMicros: { increment: remainder } },
  });
  return remainder;
}

/** A payer's credit with a seller, in micro-USD (0 without any). */
export async function creditBalance(db: Pick<Db, 'payerCredit'>, sellerId: string, payer: string): Promise<bigint> {
  const row = await db.payerCredit.findUnique({ where: { sellerId_payer: { sellerId, payer } }, select: { balanceMicros: true } });
  return row?.balanceMicros ?? 0n;
}
