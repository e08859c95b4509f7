import type { Hex } from 'viem';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { minMicros } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import { bigintOf, sqlOf } from '../db/sql.js';
import type { PaymentRail } from '../payments/rail.js';
import type { MirroredChannel } from './channel-mirror.js';

/**
 * Payers' timed withdrawals, followed from the chain (docs/decisions.md#D-309). A payer may take
 * back what is not claimed on its channel without hub: `initiateWithdraw`, then, the channel's
 * `withdrawDelay` later, `finalizeWithdraw`. What hub charged and has not claimed by then is lost to
 * the seller, so each round of the sessions worker's watch reads every channel a payer could
 * withdraw from (its balance and its withdrawal under way, many channels per read through the
 * contract's `multicall`), mirrors `withdrawRequestedAt`, and asks for a claim round at once when a
 * withdrawing channel has charges not claimed. A finalized withdrawal's smaller balance is mirrored
 * too, so no voucher is taken above it.
 */

/** Channels read in one call: two reads each, well within a node's gas cap for an eth_call. */
export const CHANNELS_PER_READ = 200;

/** The chain's clock as each network's watch last read it: the latest block's time, and when (hub's clock, ms). */
const chainClocks = new Map<string, { blockTime: number; readAtMs: number }>();

/**
 * The network's time now by its chain's clock (unix seconds): the latest block's timestamp the
 * watch read, moved on by the time since (the next block's is no earlier); hub's clock until the
 * watch has read one (docs/decisions.md#D-335).
 */
export function chainSeconds(network: string, nowMs = Date.now()): number {
  const clock = chainClocks.get(network);
  if (!clock) return Math.floor(nowMs / 1000);
  return clock.blockTime + Math.max(0, Math.floor((nowMs - clock.readAtMs) / 1000));
}

/**
 * True when the channel's withdrawal can be finalized (the scheme's check on a voucher: a channel
 * withdrawing past its deadline takes no more) at `nowSeconds`: the chain's time, `chainSeconds`,
 * which is what `finalizeWithdraw` checks.
 */
export function withdrawalDue(
  channel: Pick<MirroredChannel, 'withdrawRequestedAt' | 'withdrawDelay'>,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  return channel.withdrawRequestedAt > 0 && nowSeconds >= channel.withdrawRequestedAt + channel.withdrawDelay;
}

/**
 * One watch round: the chain's clock read, and each channel of the rail's network that holds
 * something not claimed (or whose withdrawal hub is following) read from the chain, its withdrawal
 * mirrored. `claimNow` when a
 * channel under withdrawal has charges not claimed yet.
 */
export async function watchWithdrawals(db: Db, rail: PaymentRail | undefined): Promise<{ withdrawing: number; claimNow: boolean }> {
  const sessions = rail?.sessions;
  if (!rail || !sessions) return { withdrawing: 0, claimNow: false };
  const sql = sqlOf(db);
  // The chain's clock first: a voucher on a withdrawing channel is judged by it.
  const readAtMs = Date.now();
  chainClocks.set(rail.network, { blockTime: await sessions.chainTime(), readAtMs });
  const rows = await sql.all<Record<string, unknown>>(Prisma.sql`SELECT "id", "balance", "totalClaimed", "charged", "withdrawRequestedAt"
    FROM "SessionChannel" WHERE "network" = ${rail.network} AND ("balance" > "totalClaimed" OR "withdrawRequestedAt" > 0) ORDER BY "id"`);
  let withdrawing = 0;
  let claimNow = false;
  for (let start = 0; start < rows.length; start += CHANNELS_PER_READ) {
    const chunk = rows.slice(start, start + CHANNELS_PER_READ);
    const onChain = await sessions.withdrawals(chunk.map((row) => row.id as Hex));
    for (const [i, row] of chunk.entries()) {
      const chain = onChain[i]!;
      const mirrored = { balance: bigintOf(row.balance), withdrawRequestedAt: Number(row.withdrawRequestedAt) };
      if (chain.withdrawRequestedAt > 0) {
        withdrawing++;
        if (bigintOf(row.charged) > bigintOf(row.totalClaimed)) claimNow = true;
      }
      // The balance only falls by a finalized withdrawal (or a refund hub recorded): a deposit
      // mirrored meanwhile changed the row, and the update below then leaves it as it is.
      const balance = minMicros(chain.balance, mirrored.balance);
      if (chain.withdrawRequestedAt === mirrored.withdrawRequestedAt && balance === mirrored.balance) continue;
      await sql.run(Prisma.sql`UPDATE "SessionChannel" SET "withdrawRequestedAt" = ${BigInt(chain.withdrawRequestedAt)},
          "balance" = ${balance}, "updatedAt" = ${new Date()}
        WHERE "id" = ${row.id as string} AND "balance" = ${mirrored.balance}`);
    }
  }
  return { withdrawing, claimNow };
}
