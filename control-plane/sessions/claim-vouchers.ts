import { type Hex, zeroAddress } from 'viem';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { minMicros } from '../../shared/money.js';
import { evmChainIdOf } from '../../shared/payments/evm-network.js';
import type { Db } from '../db/client.js';
import { bigintOf, type Sql, type SqlDatabase, sqlOf } from '../db/sql.js';
import type { PaymentRail } from '../payments/rail.js';
import { channelConfigOf, voucherDigest } from './channel-digests.js';
import type { SessionRail, VoucherClaim } from './session-rail.js';
import { sessionsOn } from './session-requirements.js';
import { describeSessionTransaction, dropSessionTransaction, openSessionTransaction, sendRecorded } from './session-transactions.js';
import { signedForChannel } from './voucher-signature.js';

/** Channels per claim transaction: a claim's gas grows with its rows, and a block has room for this many. */
export const MAX_CLAIMS_PER_TRANSACTION = 100;

/** A claim's record: each channel it raises, to what total, with the voucher's ceiling. */
export type ClaimItem = { channelId: string; maxClaimableAmount: string; totalClaimed: string };

/** A smart wallet's channels claimed in a round, each in a transaction of its own. */
export const MAX_WALLET_CLAIMS_PER_ROUND = 10;
/** How long a wallet's channel whose claim the chain refused takes no charge, unless a claim of it goes through first. */
const CLAIM_REFUSED_MS = 24 * 60 * 60_000;

/** Whether the channel takes no charge now: the chain refused a claim of its voucher less than a day ago, and none went through since. */
export function claimRefused(channel: { claimRefusedAt: Date | null }, now = Date.now()): boolean {
  return channel.claimRefusedAt !== null && now - +channel.claimRefusedAt < CLAIM_REFUSED_MS;
}

/**
 * Claims on chain what hub charged on its channels and has not claimed yet: each channel's latest
 * voucher, up to what was charged (not the voucher's whole ceiling), many channels in one
 * `claimWithSignature`. A claim moves no tokens; it makes the charge the seller's on chain, out of
 * reach of the payer's timed withdrawal; a channel whose payer is withdrawing goes first
 * (docs/decisions.md#D-309). The claim is recorded before it is sent
 * (session-transactions.ts), and the mirror's `totalClaimed` follows only once it is mined. A
 * round finds nothing to do while another transaction is open on the network (its own or another
 * control-plane's): that one is followed first (follow-transactions.ts).
 *
 * A smart wallet's channel (no payer authorizer) is claimed alone, after the batch: its voucher is
 * good while the wallet says so (ERC-1271), which it may stop saying, and one voucher the contract
 * refuses reverts the whole transaction it is in. One refused is passed over for the rest of the
 * round and goes behind the others in the next; when its voucher is no longer the wallet's, the
 * channel takes no charge until a claim of it goes through, for a day at most (docs/decisions.md#D-364). A batch that did not go
 * through throws, once the wallets' claims were tried.
 */
export async function claimVouchers(
  db: Db,
  rail: PaymentRail | undefined,
): Promise<{ channels: number; transaction?: Hex; refused?: number }> {
  const sessions = sessionsOn(rail);
  if (!sessions) return { channels: 0 };
  const sql = sqlOf(db);
  if (!(await claimDue(sql, sessions.network))) return { channels: 0 };
  let failure: unknown;
  const batch = await claimSome(sql, sessions, 'authorized', MAX_CLAIMS_PER_TRANSACTION, []).catch((err: unknown) => {
    failure = err;
    return undefined;
  });
  let channels = batch?.channels ?? 0;
  let refused = 0;
  const tried: string[] = [];
  // Tried whether the batch went through or not: a batch whose outcome is unknown keeps the
  // network's slot, and then no wallet's claim is sent (`claimSome` finds the slot taken).
  while (tried.length < MAX_WALLET_CLAIMS_PER_ROUND) {
    const one = await claimSome(sql, sessions, 'wallet', 1, tried).catch((err: unknown) => {
      failure ??= err;
      return undefined;
    });
    if (!one?.tried.length) break;
    tried.push(...one.tried);
    if (one.refused) refused++;
    channels += one.channels;
  }
  if (failure !== undefined) throw failure;
  return { channels, ...(batch?.transaction ? { transaction: batch.transaction } : {}), ...(refused ? { refused } : {}) };
}

/**
 * One claim transaction of up to `limit` due channels of one kind (`authorized`: with a payer
 * authorizer; `wallet`: without), leaving out `excluded`: the channels it tried, and how it went.
 * A wallet's claim the chain refused is not thrown but counted, its channel put behind the others.
 */
async function claimSome(
  sql: SqlDatabase,
  rail: PaymentRail & { sessions: SessionRail },
  kind: 'authorized' | 'wallet',
  limit: number,
  excluded: string[],
): Promise<{ tried: string[]; channels: number; transaction?: Hex; refused?: true }> {
  const id = await openSessionTransaction(sql, rail.network, 'claim');
  if (!id) return { tried: [], channels: 0 };
  // Read once the slot is held: no claim of another control-plane can land between this read and the send.
  const authorizer = kind === 'wallet' ? Prisma.sql`"payerAuthorizer" = ${zeroAddress}` : Prisma.sql`"payerAuthorizer" <> ${zeroAddress}`;
  const others = excluded.length ? Prisma.sql` AND "id" NOT IN (${Prisma.join(excluded)})` : Prisma.empty;
  const rows = await sql.all<Record<string, unknown>>(Prisma.sql`SELECT "id", "payer", "payerAuthorizer", "receiver", "receiverAuthorizer",
      "token", "withdrawDelay", "salt", "balance", "totalClaimed", "charged", "signedMaxClaimable", "voucherSignature" FROM "SessionChannel"
    WHERE ${due(rail.network)} AND ${authorizer}${others}
    ORDER BY CASE WHEN "withdrawRequestedAt" > 0 THEN 0 ELSE 1 END, "updatedAt", "id" LIMIT ${limit}`);
  if (rows.length === 0) {
    await dropSessionTransaction(sql, id);
    return { tried: [], channels: 0 };
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
  const tried = claims.map((c) => c.id);
  const sent = await sendRecorded(
    sql,
    id,
    () => rail.sessions.claim(claims),
    (tx) => applyClaim(tx, items),
  );
  if (kind === 'wallet' && (sent.status === 'refused' || sent.status === 'reverted')) {
    // Behind the other wallets' channels next round; and, when its voucher is no longer the
    // wallet's (not a refusal of the node's or the facilitator's for another cause), charged no more.
    const claim = claims[0]!;
    const digest = voucherDigest(claim.id as Hex, claim.maxClaimableAmount, evmChainIdOf(rail.network));
    // A chain that cannot be read says nothing against the voucher.
    const stillSigned = await signedForChannel(rail.sessions, claim.config, digest, claim.signature).catch(() => true);
    const now = new Date();
    await sql.run(Prisma.sql`UPDATE "SessionChannel" SET "updatedAt" = ${now}${stillSigned ? Prisma.empty : Prisma.sql`, "claimRefusedAt" = ${now}`}
      WHERE "id" = ${claim.id}`);
    return { tried, channels: 0, refused: true };
  }
  if (sent.status !== 'mined') throw new Error(`claiming ${claims.length} channels did not go through: ${sent.status}`);
  return { tried, channels: claims.length, transaction: sent.transaction as Hex | undefined };
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
    // A claim that went through: a refusal before it no longer stands.
    await tx.run(Prisma.sql`UPDATE "SessionChannel" SET "totalClaimed" = ${BigInt(item.totalClaimed)}, "claimRefusedAt" = NULL, "updatedAt" = ${now}
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
