import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { SettleOutcome } from '../../shared/contract.js';
import { microsToTokenUnits } from '../../shared/money.js';
import type { SessionPayload } from '../../shared/payments/x402-wire.js';
import { countTransaction } from '../analytics/traffic-rollup.js';
import type { Db } from '../db/client.js';
import { sqlOf } from '../db/sql.js';
import type { Attempt } from '../payments/attempt-rows.js';
import { moveAttempt, noteAttempt } from '../payments/attempt-status.js';
import { paymentSeller } from '../payments/payment-seller.js';
import type { PaymentRail } from '../payments/rail.js';
import { billingSummary } from '../payments/settlement/billing.js';
import { planPrices, settledCharge } from '../payments/settlement/charge.js';
import { releaseInFlight } from '../payments/settlement/credit-call.js';
import { commitVoucher, readChannel, releaseChannel } from './channel-mirror.js';
import { noteUnclaimed } from './session-loops.js';
import { channelState } from './session-refusal.js';
import { recordSessionCharge } from './session-revenue.js';

/**
 * Finishes a call paid by a session's voucher once the seller answered, with no transaction: a
 * 2xx is charged what was used (min(reported, authorized) per meter, as any paid call), and the
 * charge is committed to the channel with the voucher, which becomes the one a claim submits; the
 * rest of the voucher's ceiling stays the payer's in the channel. Any other answer commits
 * nothing, and the voucher may be sent again. Either way the channel is let go.
 */
export async function settleSessionCall(
  db: Db,
  rail: PaymentRail | undefined,
  attempt: Attempt & { channelId: string },
  delivered: boolean,
  upstreamStatus: number,
): Promise<SettleOutcome> {
  const sql = sqlOf(db);
  const { channelId } = attempt;
  if (!delivered) {
    await sql.transaction(async (tx) => {
      await releaseInFlight(tx, attempt.id);
      await tx.run(Prisma.sql`UPDATE "RequestRecord" SET "upstreamStatus" = ${upstreamStatus} WHERE "id" = ${attempt.requestId}`);
    });
    await releaseChannel(sql, channelId, attempt.id);
    return { kind: 'released' };
  }
  // The payload its claim checked and stored: read back, not checked again.
  const payload = (JSON.parse(attempt.paymentPayloadJson ?? '{}') as { payload: SessionPayload }).payload;
  const decimals = rail?.token.decimals ?? 6;
  const prices = await planPrices(attempt, () => paymentSeller(db, attempt.sellerId));
  const { charged, adjusted, channel } = await sql.transaction(async (tx) => {
    const charge = await settledCharge(tx, attempt, prices);
    const settled = await moveAttempt(tx, attempt.id, {
      to: 'settled',
      from: ['in_flight'],
      // The part of the ceiling not charged never left the payer's channel.
      set: { chargedMicros: charge.charged, remainderHandling: 'escrow_returned', settledAt: new Date() },
    });
    if (settled) {
      const committed = await commitVoucher(tx, channelId, attempt.id, {
        charge: microsToTokenUnits(charge.charged, decimals),
        maxClaimableAmount: BigInt(payload.voucher.maxClaimableAmount),
        signature: payload.voucher.signature,
      });
      // The hold lapsed and another request took the channel: this voucher's ceiling is that
      // request's too, so this call cannot be charged on it.
      if (!committed) {
        await noteAttempt(tx, attempt.id, { while: 'settled', set: { chargedMicros: 0n, settlementReason: 'channel_hold_lapsed' } });
        return { ...charge, charged: 0n, channel: await readChannel(tx, channelId) };
      }
      if (charge.charged > 0n) {
        await countTransaction(tx, { ...attempt, chargedMicros: charge.charged });
        await recordSessionCharge(tx, attempt, charge.charged, committed.charged);
      }
      return { ...charge, channel: committed };
    }
    return { ...charge, channel: await readChannel(tx, channelId) };
  });
  if (channel) noteUnclaimed(rail, channel.charged - channel.totalClaimed, channel.withdrawRequestedAt > 0);
  const deposit = payload.type === 'deposit' ? payload.deposit.amount : undefined;
  const transaction = attempt.settleTxHash ?? null;
  return {
    kind: 'billed',
    adjusted,
    billing: billingSummary('settled', attempt.amountMicros, charged, 'escrow_returned', transaction),
    // The scheme's payment-response: a voucher alone moved nothing (empty transaction and amount);
    // a deposit names its transaction and amount.
    receipt: {
      success: true,
      transaction: transaction ?? '',
      network: (attempt.network ?? rail?.network ?? '') as `${string}:${string}`,
      payer: attempt.payer ?? undefined,
      amount: deposit ?? '',
      extra: {
        chargedAmount: microsToTokenUnits(charged, decimals).toString(),
        ...(channel ? { channelState: channelState(channelId, channel) } : {}),
      },
    },
  };
}
