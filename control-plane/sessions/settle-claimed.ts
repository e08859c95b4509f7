import type { Address } from 'viem';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { Db } from '../db/client.js';
import { bigintOf, type Sql, sqlOf } from '../db/sql.js';
import type { PaymentRail } from '../payments/rail.js';
import type { SessionRail } from './session-rail.js';
import { describeSessionTransaction, dropSessionTransaction, openSessionTransaction, sendRecorded } from './session-transactions.js';

/**
 * A settle's record: the receiver and token, the receiver's settled total on chain once it lands
 * (its claimed total when the settle was sent), and each of its channels' claimed total then,
 * which the mirror's `totalSettled` becomes.
 */
export type SettleItem = {
  receiver: string;
  token: string;
  totalSettled: string;
  channels: { channelId: string; totalClaimed: string }[];
};

/**
 * Sends sellers what was claimed for them and not sent yet: for each receiver (a seller's wallet)
 * and token with a channel claimed past what was settled, one `settle(receiver, token)`, recorded
 * before it is sent and applied to the mirror once mined, one at a time (the network's one open
 * session transaction, shared with claims). The amount is the chain's: everything claimed for
 * the receiver and not sent yet.
 */
export async function settleClaimed(db: Db, rail: PaymentRail | undefined): Promise<{ receivers: number; amount: bigint }> {
  if (!rail?.sessions) return { receivers: 0, amount: 0n };
  const sql = sqlOf(db);
  const due = await sql.all<{ receiver: string; token: string }>(Prisma.sql`SELECT DISTINCT "receiver", "token" FROM "SessionChannel"
    WHERE "network" = ${rail.network} AND "totalClaimed" > "totalSettled" ORDER BY "receiver", "token"`);
  let receivers = 0;
  let amount = 0n;
  for (const { receiver, token } of due) {
    const swept = await settleReceiver(sql, rail as PaymentRail & { sessions: SessionRail }, receiver as Address, token as Address);
    if (swept === undefined) break; // another transaction is open: the next round goes on
    if (swept > 0n) {
      receivers++;
      amount += swept;
    }
  }
  return { receivers, amount };
}

/** Settles one receiver; undefined when the network's slot is taken. */
async function settleReceiver(
  sql: ReturnType<typeof sqlOf>,
  rail: PaymentRail & { sessions: SessionRail },
  receiver: Address,
  token: Address,
): Promise<bigint | undefined> {
  const id = await openSessionTransaction(sql, rail.network, 'settle');
  if (!id) return undefined;
  let channels: { id: string; totalClaimed: unknown }[];
  let totals: { totalClaimed: bigint; totalSettled: bigint };
  try {
    // With the slot held no claim is in flight: the mirror's claimed totals are the chain's.
    channels = await sql.all(Prisma.sql`SELECT "id", "totalClaimed" FROM "SessionChannel"
      WHERE "network" = ${rail.network} AND "receiver" = ${receiver} AND "token" = ${token} AND "totalClaimed" > "totalSettled"`);
    totals = await rail.sessions.receiverTotals(receiver, token);
  } catch (err) {
    await dropSessionTransaction(sql, id);
    throw err;
  }
  const amount = totals.totalClaimed - totals.totalSettled;
  const item: SettleItem = {
    receiver,
    token,
    totalSettled: totals.totalClaimed.toString(),
    channels: channels.map((c) => ({ channelId: c.id, totalClaimed: bigintOf(c.totalClaimed).toString() })),
  };
  if (amount === 0n) {
    // Settled already (by anyone: the contract's settle is open to all); the mirror catches up.
    await sql.transaction((tx) => applySettle(tx, item));
    await dropSessionTransaction(sql, id);
    return 0n;
  }
  await describeSessionTransaction(sql, id, item, amount);
  const sessions = rail.sessions;
  const sent = await sendRecorded(
    sql,
    id,
    () => sessions.settle(receiver, token),
    (tx) => applySettle(tx, item),
  );
  if (sent.status !== 'mined') throw new Error(`settling ${receiver} did not go through: ${sent.status}`);
  return amount;
}

/** A mined settle, in the mirror: its channels' claimed totals, as they were, are now settled. */
export async function applySettle(tx: Sql, item: SettleItem): Promise<void> {
  const now = new Date();
  for (const channel of item.channels) {
    await tx.run(Prisma.sql`UPDATE "SessionChannel" SET "totalSettled" = ${BigInt(channel.totalClaimed)}, "updatedAt" = ${now}
      WHERE "id" = ${channel.channelId} AND "totalSettled" < ${BigInt(channel.totalClaimed)}`);
  }
}

/** True when the chain counts the receiver settled up to the settle's total: it landed. */
export async function settleLanded(sessions: SessionRail, item: SettleItem): Promise<boolean> {
  const { totalSettled } = await sessions.receiverTotals(item.receiver as Address, item.token as Address);
  return totalSettled >= BigInt(item.totalSettled);
}
