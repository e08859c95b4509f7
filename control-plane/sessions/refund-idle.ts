import type { Hex } from 'viem';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { Db } from '../db/client.js';
import { bigintOf, sqlOf } from '../db/sql.js';
import type { PaymentRail } from '../payments/rail.js';
import { channelConfigOf } from './channel-digests.js';
import { REFUND_HOLD_MS, type RefundItem, sendRefund } from './refund-session.js';
import { dropSessionTransaction, openSessionTransaction } from './session-transactions.js';

/**
 * hub's own cooperative refunds of idle channels (docs/decisions.md#D-334): a channel on which no
 * voucher was taken for `idleMs` (none at all: since it was first mirrored) and whose balance is
 * above what hub charged on it gives the rest back to its payer, in one transaction that claims
 * what was charged first (the contract's `multicall` of `claimWithSignature` with the channel's
 * latest voucher and `refundWithSignature` signed as receiver authorizer), as the payer's own
 * refund does (refund-session.ts). Each is recorded before it is sent, under the network's one
 * session slot, and followed from the chain should its outcome be lost (D-303); the channel is held
 * by the record from before the chain is read until its outcome is known, so no call is taken on it
 * meanwhile and no refund is made under a call in progress. A channel whose payer is withdrawing is
 * left to its withdrawal.
 */

/** Channels refunded in one round at most: each is a transaction of its own, sent one after another. */
export const IDLE_REFUNDS_PER_ROUND = 20;

/** The columns of a channel to refund: its config, what hub charged and its latest voucher. */
const COLUMNS = Prisma.raw(
  `"id", "payer", "payerAuthorizer", "receiver", "receiverAuthorizer", "token", "withdrawDelay", "salt", "charged", "signedMaxClaimable", "voucherSignature"`,
);

/** A channel idle since `cutoff`, with something above what was charged, not withdrawing, held by no one (or a lapsed hold). */
function idleSince(network: string, cutoff: Date, now: Date) {
  return Prisma.sql`"network" = ${network} AND "balance" > "charged" AND "withdrawRequestedAt" = 0
    AND COALESCE("lastRequestAt", "createdAt") < ${cutoff} AND ("heldBy" IS NULL OR "heldUntil" < ${now})`;
}

/**
 * One round: each idle channel of the rail's network refunded in turn, up to
 * `IDLE_REFUNDS_PER_ROUND`. Stops early when the network's slot is taken (a claim or a settle under
 * way: the next round goes on). `refunded` counts the refunds mined, `amount` what they gave back.
 */
export async function refundIdleChannels(
  db: Db,
  rail: PaymentRail | undefined,
  idleMs: number,
): Promise<{ refunded: number; amount: bigint; pending: number }> {
  const sessions = rail?.sessions;
  const result = { refunded: 0, amount: 0n, pending: 0 };
  if (!rail || !sessions) return result;
  const sql = sqlOf(db);
  const now = new Date();
  const cutoff = new Date(+now - idleMs);
  const candidates = await sql.all<{
    id: string;
  }>(Prisma.sql`SELECT "id" FROM "SessionChannel" WHERE ${idleSince(rail.network, cutoff, now)}
    ORDER BY COALESCE("lastRequestAt", "createdAt"), "id" LIMIT ${IDLE_REFUNDS_PER_ROUND}`);
  for (const { id: channelId } of candidates) {
    const recordId = await openSessionTransaction(sql, rail.network, 'refund');
    if (!recordId) break;
    // Held by the record only if still idle and free: a call that took the channel since is not refunded under.
    const row = await sql.get<Record<string, unknown>>(Prisma.sql`UPDATE "SessionChannel"
      SET "heldBy" = ${recordId}, "heldUntil" = ${new Date(Date.now() + REFUND_HOLD_MS)}
      WHERE "id" = ${channelId} AND ${idleSince(rail.network, cutoff, new Date())}
      RETURNING ${COLUMNS}`);
    if (!row) {
      await dropSessionTransaction(sql, recordId);
      continue;
    }
    const letGo = async () => {
      await sql.run(Prisma.sql`UPDATE "SessionChannel" SET "heldBy" = NULL, "heldUntil" = NULL
        WHERE "id" = ${channelId} AND "heldBy" = ${recordId}`);
      await dropSessionTransaction(sql, recordId);
    };
    let onChain: { balance: bigint; totalClaimed: bigint };
    let nonce: bigint;
    try {
      [onChain, nonce] = await Promise.all([sessions.channel(channelId as Hex), sessions.refundNonce(channelId as Hex)]);
    } catch (err) {
      await letGo();
      throw err;
    }
    const charged = bigintOf(row.charged);
    // hub claims only what it charged; a chain claimed past it, or nothing left above it, is not refunded.
    if (onChain.totalClaimed > charged || onChain.balance <= charged) {
      await letGo();
      continue;
    }
    const config = channelConfigOf(row);
    const signedMaxClaimable = bigintOf(row.signedMaxClaimable);
    const amount = onChain.balance - charged;
    const item: RefundItem = {
      channelId,
      maxClaimableAmount: signedMaxClaimable.toString(),
      totalClaimed: charged.toString(),
      refundNonce: nonce.toString(),
      amount: amount.toString(),
      balance: charged.toString(),
    };
    // What was charged and not claimed yet is claimed first, with the channel's latest voucher.
    const claim =
      charged > onChain.totalClaimed && row.voucherSignature
        ? { config, maxClaimableAmount: signedMaxClaimable, signature: row.voucherSignature as Hex, totalClaimed: charged }
        : undefined;
    const sent = await sendRefund(sql, sessions, recordId, item, { config, amount, nonce, claim });
    if (sent.status === 'mined') {
      result.refunded++;
      result.amount += amount;
    } else if (sent.status === 'unknown') {
      // Followed by the next round, the channel held by the record meanwhile; the slot is taken until then.
      result.pending++;
      break;
    }
  }
  return result;
}
