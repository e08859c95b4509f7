import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { newId } from '../../shared/ids.js';
import { bigintOf, type Sql } from '../db/sql.js';

/**
 * Payers' credit with sellers (docs/decisions.md › Payments › Remainders). x402's `exact` scheme
 * moves the whole authorization on chain; when a call is charged less, the difference reached the
 * seller all the same and is the payer's credit there. Each change is a `CreditEntry` (one per
 * payment and reason, so a settlement finished twice credits once) and moves `PayerCredit`.
 */

type SettledAttempt = { id: string; sellerId: string; payer: string | null; amountMicros: bigint; chargedMicros: bigint | null };

/** Credits what a settled payment moved beyond its charge. Runs in the transaction that marks it settled. */
export async function creditRemainder(tx: Sql, attempt: SettledAttempt): Promise<bigint> {
  const remainder = attempt.amountMicros - (attempt.chargedMicros ?? attempt.amountMicros);
  if (remainder <= 0n || !attempt.payer) return 0n;
  await addCredit(tx, {
    sellerId: attempt.sellerId,
    payer: attempt.payer,
    micros: remainder,
    reason: 'remainder',
    paymentAttemptId: attempt.id,
  });
  return remainder;
}

/**
 * Draws `micros` for a payment if the balance covers them, in the caller's transaction; false when
 * it does not (the balance never goes below zero, however many calls draw at once).
 */
export async function drawCredit(
  tx: Sql,
  draw: { sellerId: string; payer: string; micros: bigint; paymentAttemptId: string },
): Promise<boolean> {
  const { sellerId, payer, micros, paymentAttemptId } = draw;
  const drawn = await tx.run(Prisma.sql`UPDATE "PayerCredit" SET "balanceMicros" = "balanceMicros" - ${micros}, "updatedAt" = ${new Date()}
    WHERE "sellerId" = ${sellerId} AND "payer" = ${payer} AND "balanceMicros" >= ${micros}`);
  if (drawn !== 1) return false;
  await tx.run(entry({ sellerId, payer, micros: -micros, reason: 'draw', paymentAttemptId }));
  return true;
}

/** Gives back what a credit-paid call drew but was not charged (all of it when released). Once per payment. */
export async function returnCredit(
  tx: Sql,
  payment: { id: string; sellerId: string; payer: string | null },
  micros: bigint,
): Promise<void> {
  if (micros <= 0n) return;
  await addCredit(tx, { sellerId: payment.sellerId, payer: payment.payer ?? '', micros, reason: 'return', paymentAttemptId: payment.id });
}

/** A payer's credit with a seller, in micro-USD (0 without any). */
export async function creditBalance(sql: Sql, sellerId: string, payer: string): Promise<bigint> {
  const row = await sql.get<{ balanceMicros: unknown }>(
    Prisma.sql`SELECT "balanceMicros" FROM "PayerCredit" WHERE "sellerId" = ${sellerId} AND "payer" = ${payer}`,
  );
  return row ? bigintOf(row.balanceMicros) : 0n;
}

type Change = { sellerId: string; payer: string; micros: bigint; reason: 'remainder' | 'draw' | 'return'; paymentAttemptId: string };

/** The ledger entry of a change; its unique (payment, reason) refuses a second. */
function entry(change: Change): Prisma.Sql {
  const { sellerId, payer, micros, reason, paymentAttemptId } = change;
  return Prisma.sql`INSERT INTO "CreditEntry" ("id", "sellerId", "payer", "deltaMicros", "reason", "paymentAttemptId", "createdAt")
    VALUES (${newId('creditEntry')}, ${sellerId}, ${payer}, ${micros}, ${reason}, ${paymentAttemptId}, ${new Date()})`;
}

async function addCredit(tx: Sql, change: Change): Promise<void> {
  const { sellerId, payer, micros } = change;
  await tx.run(entry(change));
  const now = new Date();
  await tx.run(Prisma.sql`INSERT INTO "PayerCredit" ("sellerId", "payer", "balanceMicros", "updatedAt") VALUES (${sellerId}, ${payer}, ${micros}, ${now})
    ON CONFLICT ("sellerId", "payer") DO UPDATE SET "balanceMicros" = "PayerCredit"."balanceMicros" + excluded."balanceMicros", "updatedAt" = excluded."updatedAt"`);
}
