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

/**
 * Draws `micros` for a payment if the balance covers them, in the caller's transaction; false when
 * it does not (the balance never goes below zero, however many calls draw at once).
 */
export async function drawCredit(
  tx: Tx,
  draw: { sellerId: string; payer: string; micros: bigint; paymentAttemptId: string },
): Promise<boolean> {
  const { sellerId, payer, micros, paymentAttemptId } = draw;
  const drawn = await tx.payerCredit.updateMany({
    where: { sellerId, payer, balanceMicros: { gte: micros } },
    data: { balanceMicros: { decrement: micros } },
  });
  if (drawn.count !== 1) return false;
  await tx.creditEntry.create({
    data: { id: newId('creditEntry'), sellerId, payer, deltaMicros: -micros, reason: 'draw', paymentAttemptId },
  });
  return true;
}

/** Gives back what a credit-paid call drew but was not charged (all of it when released). Once per payment. */
export async function returnCredit(tx: Tx, payment: { id: string; sellerId: string; payer: string | null }, micros: bigint): Promise<void> {
  if (micros <= 0n) return;
  const { sellerId } = payment;
  const payer = payment.payer ?? '';
  await tx.creditEntry.create({
    data: { id: newId('creditEntry'), sellerId, payer, deltaMicros: micros, reason: 'return', paymentAttemptId: payment.id },
  });
  await tx.payerCredit.update({ where: { sellerId_payer: { sellerId, payer } }, data: { balanceMicros: { increment: micros } } });
}

/** A payer's credit with a seller, in micro-USD (0 without any). */
export async function creditBalance(db: Pick<Db, 'payerCredit'>, sellerId: string, payer: string): Promise<bigint> {
  const row = await db.payerCredit.findUnique({ where: { sellerId_payer: { sellerId, payer } }, select: { balanceMicros: true } });
  return row?.balanceMicros ?? 0n;
}
