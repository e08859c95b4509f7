import type { Hex } from 'viem';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { minMicros } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { bigintOf, type Sql, sqlOf } from '../db/sql.js';
import type { PaymentRail } from '../payments/rail.js';
import { channelConfigOf } from './channel-digests.js';
import type { SessionRail, VoucherClaim } from './session-rail.js';
import { describeSessionTransaction, dropSessionTransaction, openSessionTransaction, sendRecorded } from './session-transactions.js';

/** Channels per claim transaction: a claim's gas grows with its rows, and a block has room for this many. */
export const MAX_CLAIMS_PER_TRANSACTION = 100;

/** A claim's record: each channel it raises, to what total, with the voucher's ceiling. */
export type ClaimItem = { channelId: string; maxClaimableAmount: string; totalClaimed: string };

/**
 * Claims on chain what hub charged on its channels and has not claimed yet: each channel's latest
 * voucher, up to what was charged (not the voucher's whole ceiling), many channels in one
 * `claimWithSignature`. A claim moves no tokens; it makes the charge the seller's on chain, out of
 * reach of the payer's timed withdrawal; a channel whose payer is withdrawing goes first
 * (docs/decisions.md#D-309). The claim is recorded before it is sent
 * (session-transactions.ts), and the mirror's `totalClaimed` follows only once it is mined. A
 * round finds nothing to do while another transaction is open on the network (its own or another
 * control-plane's): that one is followed first (follow-transactions.ts).
 */
export async function claimVouchers(db: Db, rail: PaymentRail | undefined): Promise<{ channels: number; transaction?: Hex }> {
  if (!rail?.sessions) return { channels: 0 };
  const sql = sqlOf(db);
  if (!(await claimDue(sql, rail.network))) return { channels: 0 };
  const id = await openSessionTransaction(sql, rail.network, 'claim');
  if (!id) return { channels: 0 };
  // Read once the slot is held: no claim of another control-plane can land between this read and the send.
  const rows = await sql.all<Record<string, unknown>>(Prisma.sql`SELECT "id", "payer", "payerAuthorizer", "receiver", "receiverAuthorizer",
      "token", "withdrawDelay", "salt", "balance", "totalClaimed", "charged", "signedMaxClaimable", "voucherSignature" FROM "SessionChannel"
    WHERE ${due(rail.network)}
    ORDER BY CASE WHEN "withdrawRequestedAt" > 0 THEN 0 ELSE 1 END, "updatedAt", "id" LIMIT ${MAX_CLAIMS_PER_TRANSACTION}`);
  if (rows.length === 0) {
    await dropSessionTransaction(sql, id);
    return { channels: 0 };
  }
  const claims: (VoucherClaim & { id: string })[] = rows.map((row) => ({
    id: row.id as string,
    config: channelConfigOf(row),
    maxClaimableAmount: bigintOf(row.signedMaxClaimable),
    signature: row.voucherSignature as Hex,
    // What was charged; only what is left in the channel should a payer's withdrawal have been
    // finalized before the charge was claimed (more would revert the whole batch).
    totalClaimed: minMicros(bigintOf(row.charged), bigintOf(row.balance)),
  }));
  const items: ClaimItem[] = claims.map((c) => ({
    channelId: c.id,
    maxClaimableAmount: c.maxClaimableAmount.toString(),
    totalClaimed: c.totalClaimed.toString(),
  }));
  const amount = rows.reduce((sum, row, i) => sum + claims[i]!.totalClaimed - bigintOf(row.totalClaimed), 0n);
  await describeSessionTransaction(sql, id, items, amount);
  const sessions = rail.sessions;
  const sent = await sendRecorded(
    sql,
    id,
    () => sessions.claim(claims),
    (tx) => applyClaim(tx, items),
  );
  if (sent.status !== 'mined') throw new Error(`claiming ${claims.length} channels did not go through: ${sent.status}`);
  return { channels: claims.length, transaction: sent.transaction };
}

/** True when some channel has a charge not claimed yet: a round with nothing to claim writes nothing. */
async function claimDue(sql: Sql, network: string): Promise<boolean> {
  return !!(await sql.get(Prisma.sql`SELECT 1 AS "due" FROM "SessionChannel" WHERE ${due(network)} LIMIT 1`));
}

/** A channel with a charge not claimed yet, and something left in it to claim it from. */
function due(network: string) {
  return Prisma.sql`"network" = ${network} AND "charged" > "totalClaimed" AND "balance" > "totalClaimed" AND "voucherSignature" IS NOT NULL`;
}

/** A mined claim, in the mirror: each channel's claimed total raised to what the claim claimed. */
export async function applyClaim(tx: Sql, items: ClaimItem[]): Promise<void> {
  const now = new Date();
  for (const item of items) {
    await tx.run(Prisma.sql`UPDATE "SessionChannel" SET "totalClaimed" = ${BigInt(item.totalClaimed)}, "updatedAt" = ${now}
      WHERE "id" = ${item.channelId} AND "totalClaimed" < ${BigInt(item.totalClaimed)}`);
  }
}

/** True when the chain holds every channel of the claim at (or past) the total it claims: the claim landed. */
export async function claimLanded(sessions: SessionRail, items: ClaimItem[]): Promise<boolean> {
  for (const item of items) {
    const { totalClaimed } = await sessions.channel(item.channelId as Hex);
    if (totalClaimed < BigInt(item.totalClaimed)) return false;
  }
  return items.length > 0;
}
