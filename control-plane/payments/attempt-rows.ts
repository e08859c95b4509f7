import { type PaymentAttempt, Prisma } from '../../generated/prisma/sqlite/client.js';
import { bigintOf, bigintOrNull, dateOf, dateOrNull, type Sql } from '../db/sql.js';
import { type AttemptStatus, attemptStatusOf } from './attempt-status.js';

/**
 * Payment attempts as a paid call reads them on the SQL lane (db/sql.ts): the row in
 * the ORM's own shape, so the code that decides on it does not care which way it was read.
 */

type Raw = Record<keyof PaymentAttempt, unknown>;

/** An attempt as read, its status one of the table's. */
export type Attempt = PaymentAttempt & { status: AttemptStatus };

/** The attempt, or undefined when there is none. */
export async function readAttempt(sql: Sql, id: string): Promise<Attempt | undefined> {
  const row = await sql.get<Raw>(Prisma.sql`SELECT * FROM "PaymentAttempt" WHERE "id" = ${id}`);
  return row && attemptOf(row);
}

/** The attempts `where` picks, oldest first. */
export async function readAttempts(sql: Sql, where: Prisma.Sql): Promise<Attempt[]> {
  const rows = await sql.all<Raw>(Prisma.sql`SELECT * FROM "PaymentAttempt" WHERE ${where} ORDER BY "createdAt", "id"`);
  return rows.map(attemptOf);
}

function attemptOf(row: Raw): Attempt {
  const text = (value: unknown) => value as string;
  const textOrNull = (value: unknown) => (value ?? null) as string | null;
  return {
    id: text(row.id),
    organizationId: text(row.organizationId),
    sellerId: text(row.sellerId),
    serviceId: textOrNull(row.serviceId),
    planId: textOrNull(row.planId),
    requestId: text(row.requestId),
    agentId: textOrNull(row.agentId),
    kind: text(row.kind),
    method: text(row.method),
    pathAndQuery: text(row.pathAndQuery),
    bodyDigest: text(row.bodyDigest),
    usageJson: text(row.usageJson),
    purchaseJson: textOrNull(row.purchaseJson),
    accessId: textOrNull(row.accessId),
    amountMicros: bigintOf(row.amountMicros),
    authorizedMicros: bigintOrNull(row.authorizedMicros),
    chargedMicros: bigintOrNull(row.chargedMicros),
    protocol: textOrNull(row.protocol),
    paymentMethod: textOrNull(row.paymentMethod),
    rail: textOrNull(row.rail),
    network: textOrNull(row.network),
    asset: textOrNull(row.asset),
    payTo: textOrNull(row.payTo),
    payoutTo: textOrNull(row.payoutTo),
    channelId: textOrNull(row.channelId),
    payer: textOrNull(row.payer),
    challengeId: textOrNull(row.challengeId),
    paymentPayloadJson: textOrNull(row.paymentPayloadJson),
    status: attemptStatusOf(row.status),
    settleTxHash: textOrNull(row.settleTxHash),
    holdTxHash: textOrNull(row.holdTxHash),
    refundTxHash: textOrNull(row.refundTxHash),
    settlementReason: textOrNull(row.settlementReason),
    remainderHandling: textOrNull(row.remainderHandling),
    expiresAt: dateOrNull(row.expiresAt),
    createdAt: dateOf(row.createdAt),
    verifiedAt: dateOrNull(row.verifiedAt),
    settledAt: dateOrNull(row.settledAt),
  };
}
