import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { bigintOf, dateOrNull, type Sql } from '../db/sql.js';
import type { ChannelConfig } from './channel-digests.js';

/**
 * hub's durable mirror of a batch-settlement channel (`SessionChannel`): what the chain holds and
 * what hub charged against the payer's latest voucher. A paid retry holds the channel from its
 * claim to its settlement with one conditional update, so requests on a channel take turns across
 * every control-plane on the database; a hold left by a process that stopped lapses by itself.
 */

export type MirroredChannel = {
  id: string;
  balance: bigint;
  totalClaimed: bigint;
  /** chargedCumulativeAmount: what hub charged on the channel, in all. */
  charged: bigint;
  signedMaxClaimable: bigint;
  voucherSignature: string | null;
  /** Cooperative refunds the chain counts on the channel, as far as hub knows. */
  refundNonce: number;
  /** The payer's timed withdrawal under way, as hub last saw the chain: when it started (unix seconds; 0: none). */
  withdrawRequestedAt: number;
  /** Seconds from a withdrawal's start until it can be finalized. */
  withdrawDelay: number;
  /** When the chain last refused a claim of its voucher, until a claim of it went through (claim-vouchers.ts). */
  claimRefusedAt: Date | null;
};

/** The columns a `MirroredChannel` is read from. */
const MIRRORED = Prisma.raw(
  `"id", "balance", "totalClaimed", "charged", "signedMaxClaimable", "voucherSignature", "refundNonce", "withdrawRequestedAt", "withdrawDelay", "claimRefusedAt"`,
);

export async function readChannel(sql: Sql, id: string): Promise<MirroredChannel | undefined> {
  return mirrored(
    await sql.get<Record<keyof MirroredChannel, unknown>>(Prisma.sql`SELECT ${MIRRORED} FROM "SessionChannel" WHERE "id" = ${id}`),
  );
}

function mirrored(row: Record<keyof MirroredChannel, unknown> | undefined): MirroredChannel | undefined {
  if (!row) return undefined;
  return {
    id: row.id as string,
    balance: bigintOf(row.balance),
    totalClaimed: bigintOf(row.totalClaimed),
    charged: bigintOf(row.charged),
    signedMaxClaimable: bigintOf(row.signedMaxClaimable),
    voucherSignature: (row.voucherSignature ?? null) as string | null,
    refundNonce: Number(row.refundNonce),
    withdrawRequestedAt: Number(row.withdrawRequestedAt),
    withdrawDelay: Number(row.withdrawDelay),
    claimRefusedAt: dateOrNull(row.claimRefusedAt),
  };
}

/**
 * Starts mirroring a channel hub has no record of, from the chain: what was claimed on it is
 * where charging starts (the scheme's baseline after state loss; vouchers hub never claimed are
 * forfeit). Another claim may record it first; its record stands.
 */
export async function mirrorChannel(
  sql: Sql,
  id: string,
  network: string,
  config: ChannelConfig,
  chain: { balance: bigint; totalClaimed: bigint },
): Promise<void> {
  const now = new Date();
  await sql.run(Prisma.sql`INSERT INTO "SessionChannel" ("id", "network", "payer", "payerAuthorizer", "receiver", "receiverAuthorizer",
      "token", "withdrawDelay", "salt", "balance", "totalClaimed", "charged", "signedMaxClaimable", "createdAt", "updatedAt")
    VALUES (${id}, ${network}, ${config.payer.toLowerCase()}, ${config.payerAuthorizer.toLowerCase()}, ${config.receiver.toLowerCase()},
      ${config.receiverAuthorizer.toLowerCase()}, ${config.token.toLowerCase()}, ${config.withdrawDelay}, ${config.salt.toLowerCase()},
      ${chain.balance}, ${chain.totalClaimed}, ${chain.totalClaimed}, ${chain.totalClaimed}, ${now}, ${now})
    ON CONFLICT ("id") DO NOTHING`);
}

/**
 * Takes the channel for `attemptId` unless another request holds it, for `holdMs`: the channel as
 * taken, read in the same statement; undefined when another request holds it or hub has no record
 * of it. A paid retry holds its channel as long as its call may stay claimed before it is taken for
 * stranded (`HUB_STRANDED_CALL_MS`, longer than any seller may take to answer): a hold never lapses
 * under a call the seller is still answering (docs/decisions.md#D-354).
 */
export async function holdChannel(sql: Sql, id: string, attemptId: string, holdMs: number): Promise<MirroredChannel | undefined> {
  const now = new Date();
  return mirrored(
    await sql.get<Record<keyof MirroredChannel, unknown>>(Prisma.sql`UPDATE "SessionChannel"
    SET "heldBy" = ${attemptId}, "heldUntil" = ${new Date(+now + holdMs)}
    WHERE "id" = ${id} AND ("heldBy" IS NULL OR "heldBy" = ${attemptId} OR "heldUntil" < ${now})
    RETURNING ${MIRRORED}`),
  );
}

/** Lets the channel go, if `attemptId` still holds it. */
export async function releaseChannel(sql: Sql, id: string, attemptId: string): Promise<void> {
  await sql.run(Prisma.sql`UPDATE "SessionChannel" SET "heldBy" = NULL, "heldUntil" = NULL WHERE "id" = ${id} AND "heldBy" = ${attemptId}`);
}

/**
 * Lets the channel go after a paid retry failed, unless its attempt is claimed: the same payment
 * sent twice at once shares the attempt's hold, and the copy that lost the claim must not free the
 * channel under the one the seller is answering (whose voucher would then be taken again by the
 * payer's next request, and its own commit find the channel gone: a call served uncharged).
 */
export async function releaseUnlessClaimed(sql: Sql, id: string, attemptId: string): Promise<void> {
  await sql.run(Prisma.sql`UPDATE "SessionChannel" SET "heldBy" = NULL, "heldUntil" = NULL WHERE "id" = ${id} AND "heldBy" = ${attemptId}
    AND NOT EXISTS (SELECT 1 FROM "PaymentAttempt" p WHERE p."id" = ${attemptId} AND p."status" = 'in_flight')`);
}

/** The channel's balance as the chain has it now (after a deposit hub submitted). */
export async function mirrorBalance(sql: Sql, id: string, balance: bigint): Promise<void> {
  await sql.run(Prisma.sql`UPDATE "SessionChannel" SET "balance" = ${balance}, "updatedAt" = ${new Date()} WHERE "id" = ${id}`);
}

/**
 * Commits a served call to the channel: its charge added, the voucher it came with kept as the
 * latest (what a claim submits), and the channel let go. Only while `attemptId` holds it: the
 * channel as committed, read in the same statement; undefined when it does not (its hold lapsed
 * and another request took the channel).
 */
export async function commitVoucher(
  tx: Sql,
  id: string,
  attemptId: string,
  voucher: { charge: bigint; maxClaimableAmount: bigint; signature: string },
): Promise<MirroredChannel | undefined> {
  const now = new Date();
  return mirrored(
    await tx.get<Record<keyof MirroredChannel, unknown>>(Prisma.sql`UPDATE "SessionChannel" SET "charged" = "charged" + ${voucher.charge},
      "signedMaxClaimable" = ${voucher.maxClaimableAmount}, "voucherSignature" = ${voucher.signature},
      "heldBy" = NULL, "heldUntil" = NULL, "lastRequestAt" = ${now}, "updatedAt" = ${now}
    WHERE "id" = ${id} AND "heldBy" = ${attemptId}
    RETURNING ${MIRRORED}`),
  );
}
