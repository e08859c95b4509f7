import type { Logger } from 'pino';
import type { Address, Hex } from 'viem';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { Db } from '../db/client.js';
import { bigintOf, sqlOf } from '../db/sql.js';
import type { PaymentRail } from '../payments/rail.js';
import type { VoucherClaim } from './session-rail.js';

/** Channels per claim transaction: a claim's gas grows with its rows, and a block has room for this many. */
export const MAX_CLAIMS_PER_TRANSACTION = 100;

/**
 * Claims on chain what hub charged on its channels and has not claimed yet: each channel's latest
 * voucher, up to what was charged (not the voucher's whole ceiling), many channels in one
 * `claimWithSignature`. A claim moves no tokens; it makes the charge the seller's on chain, out of
 * reach of the payer's timed withdrawal. The mirror's `totalClaimed` follows once the claim is
 * mined; a claim sent again claims nothing (the contract skips a row at the total already claimed).
 */
export async function claimVouchers(db: Db, rail: PaymentRail | undefined): Promise<{ channels: number; transaction?: Hex }> {
  if (!rail?.sessions) return { channels: 0 };
  const sql = sqlOf(db);
  const rows = await sql.all<Record<string, unknown>>(Prisma.sql`SELECT "id", "payer", "payerAuthorizer", "receiver", "receiverAuthorizer",
      "token", "withdrawDelay", "salt", "charged", "signedMaxClaimable", "voucherSignature" FROM "SessionChannel"
    WHERE "network" = ${rail.network} AND "charged" > "totalClaimed" AND "voucherSignature" IS NOT NULL
    ORDER BY "updatedAt", "id" LIMIT ${MAX_CLAIMS_PER_TRANSACTION}`);
  if (rows.length === 0) return { channels: 0 };
  const claims: (VoucherClaim & { id: string })[] = rows.map((row) => ({
    id: row.id as string,
    config: {
      payer: row.payer as Address,
      payerAuthorizer: row.payerAuthorizer as Address,
      receiver: row.receiver as Address,
      receiverAuthorizer: row.receiverAuthorizer as Address,
      token: row.token as Address,
      withdrawDelay: Number(row.withdrawDelay),
      salt: row.salt as Hex,
    },
    maxClaimableAmount: bigintOf(row.signedMaxClaimable),
    signature: row.voucherSignature as Hex,
    totalClaimed: bigintOf(row.charged),
  }));
  const sent = await rail.sessions.claim(claims);
  if (sent.status !== 'mined') throw new Error(`claiming ${claims.length} channels did not go through: ${sent.status}`);
  await sql.transaction(async (tx) => {
    for (const claim of claims) {
      await tx.run(Prisma.sql`UPDATE "SessionChannel" SET "totalClaimed" = ${claim.totalClaimed}, "updatedAt" = ${new Date()}
        WHERE "id" = ${claim.id} AND "totalClaimed" < ${claim.totalClaimed}`);
    }
  });
  return { channels: claims.length, transaction: sent.transaction };
}

/** Every `intervalMs`, claims what is unclaimed, one round at a time (`HUB_SESSIONS_CLAIM_INTERVAL_S`). */
export function startVoucherClaimLoop(db: Db, rail: PaymentRail | undefined, logger: Logger, intervalMs: number): () => void {
  if (!rail?.sessions) return () => {};
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    claimVouchers(db, rail)
      .then(({ channels, transaction }) => {
        if (channels) logger.info({ channels, transaction }, 'claimed session vouchers');
      })
      .catch((err) => logger.warn({ err }, 'claiming session vouchers failed'))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
