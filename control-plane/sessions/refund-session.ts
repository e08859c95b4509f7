import { getAddress, type Hex } from 'viem';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { ClaimedPayment } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import type { SessionPayload } from '../../shared/payments/x402-wire.js';
import type { Db } from '../db/client.js';
import { type Sql, sqlOf } from '../db/sql.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator.js';
import type { CallOutcome } from '../facilitator/local-facilitator.js';
import type { Attempt } from '../payments/attempt-rows.js';
import { moveAttempt } from '../payments/attempt-status.js';
import type { PaymentRail } from '../payments/rail.js';
import type { ChannelConfig } from './channel-digests.js';
import type { MirroredChannel } from './channel-mirror.js';
import type { SessionRail } from './session-rail.js';
import { channelState, unreadable } from './session-refusal.js';
import { describeSessionTransaction, FOLLOW_GIVE_UP_MS, recordOutcome, waitForNetworkSlot } from './session-transactions.js';

/**
 * A refund's record: the channel, the total its claim raises the claimed amount to (what hub
 * charged) with the payer's voucher at that total, the refund nonce it is signed for, the amount
 * returned to the payer and the channel's balance after it.
 */
export type RefundItem = {
  channelId: string;
  maxClaimableAmount: string;
  totalClaimed: string;
  refundNonce: string;
  amount: string;
  balance: string;
  /** The payer's refund's attempt, finished with the refund; absent for hub's own refund of an idle channel. */
  attemptId?: string;
};

/** How long a refund waits for the transaction open on the network (a claim, a settle) to end before it is sent. */
const SLOT_WAIT_MS = 10_000;

/**
 * The payer's cooperative refund (the scheme's `refund` payload), taken on a channel held for this
 * attempt: its voucher names exactly what hub charged, and its `amount` (all that is not charged
 * when absent) is a whole number no greater than the channel's balance less that, and at least a
 * call's price unless it is all of it (D-358). Then,
 * in one transaction recorded before it is sent (docs/decisions.md#D-303), what was charged is
 * claimed with the payer's voucher and the amount refunded with the receiver authorizer's
 * signature. The attempt is the refund's and ends released, nothing charged, with the refund's
 * transaction; the receipt goes back to the payer and nothing is forwarded
 * (docs/decisions.md#D-308). A refused refund changes nothing.
 */
export async function refundSession(
  db: Db,
  rail: PaymentRail & { sessions: SessionRail },
  request: {
    attempt: Attempt;
    /** Claims the attempt for the payer, in `tx`, as any of the channel's paid retries is claimed. */
    claim: (tx: Sql) => Promise<ClaimedPayment>;
    payload: Extract<SessionPayload, { type: 'refund' }>;
    config: ChannelConfig;
    channelId: Hex;
    channel: MirroredChannel;
    /** One call's price on the channel (token units): the least a partial refund may ask for. */
    price: bigint;
    /** Follows the transaction open on the network from the chain (follow-transactions.ts), while the refund waits for it. */
    followOpen: () => Promise<unknown>;
    refuse: (code: string) => ApiError;
  },
): Promise<ClaimedPayment> {
  const { attempt, payload, config, channelId, channel, refuse } = request;
  const sql = sqlOf(db);
  const sessions = rail.sessions;
  const [onChain, nonce] = await Promise.all([sessions.channel(channelId), sessions.refundNonce(channelId)]).catch(unreadable);
  // hub claims only what it charged, so the chain's claimed total is never past it.
  if (onChain.totalClaimed > channel.charged) throw refuse('invalid_batch_settlement_evm_cumulative_amount_mismatch');
  const refundable = onChain.balance - channel.charged;
  if (refundable <= 0n) throw refuse('invalid_batch_settlement_evm_refund_no_balance');
  const amount = requestedAmount(payload.amount, refundable, request.price);
  if (amount === undefined) throw refuse('invalid_batch_settlement_evm_refund_amount_invalid');

  const payer = getAddress(config.payer).toLowerCase();
  const claimed = await sql.transaction(request.claim);
  const release = () =>
    sql.transaction((tx) => moveAttempt(tx, attempt.id, { to: 'released', from: ['in_flight'], set: { chargedMicros: 0n } }));
  const id = await waitForNetworkSlot(sql, rail.network, 'refund', SLOT_WAIT_MS, request.followOpen);
  if (!id) {
    await release();
    throw new ApiError('service_unavailable', 'Another transaction of this network is under way. Send the refund again shortly.');
  }
  const item: RefundItem = {
    channelId,
    maxClaimableAmount: channel.charged.toString(),
    totalClaimed: channel.charged.toString(),
    refundNonce: nonce.toString(),
    amount: amount.toString(),
    balance: (onChain.balance - amount).toString(),
    attemptId: attempt.id,
  };
  // From here the refund's record holds the channel, until its outcome is known (here or, lost, by
  // the worker that follows it): no voucher is checked against the balance from before it.
  await holdForRefund(sql, channelId, id, attempt.id);
  // What was charged and not claimed yet is claimed first, with the payer's voucher at that total.
  const claim =
    channel.charged > onChain.totalClaimed
      ? { config, maxClaimableAmount: channel.charged, signature: payload.voucher.signature as Hex, totalClaimed: channel.charged }
      : undefined;
  const sent = await sendRefund(sql, sessions, id, item, { config, amount, nonce, claim }).catch(unreadable);
  if (sent.status === 'refused' || sent.status === 'reverted') throw refuse('invalid_batch_settlement_evm_refund_transaction_failed');
  if (sent.status === 'unknown') {
    // The record stays open with its hash; the sessions worker follows it, and finishes the attempt with it.
    throw new ApiError('service_unavailable', 'The refund was sent but the chain has not confirmed it yet.');
  }
  return {
    ...claimed,
    refund: {
      success: true,
      transaction: sent.transaction ?? '',
      network: rail.network as `${string}:${string}`,
      payer,
      amount: amount.toString(),
      extra: {
        channelState: channelState(channelId, {
          balance: onChain.balance - amount,
          totalClaimed: channel.charged,
          charged: channel.charged,
          refundNonce: Number(nonce) + 1,
          withdrawRequestedAt: channel.withdrawRequestedAt,
        }),
      },
    },
  };
}

/** The amount asked for: all that is refundable when absent; undefined when not a positive whole number within it. */
function requestedAmount(asked: unknown, refundable: bigint, least: bigint): bigint | undefined {
  if (asked === undefined) return refundable;
  if (typeof asked !== 'string' || !/^\d{1,39}$/.test(asked)) return undefined;
  const amount = BigInt(asked);
  // At least a call's price (or all there is): a voucher at what was charged is public once claimed
  // on chain, so anyone could otherwise ask a refund of one unit at a time, each a transaction hub
  // pays for and a turn of the network's one session slot (docs/decisions.md#D-358).
  return amount >= (least < refundable ? least : refundable) && amount > 0n && amount <= refundable ? amount : undefined;
}

/**
 * How a refund's send ended: a `CallOutcome`, or mined with no receipt (and no hash, when the
 * answer named none) for a refund answered refused or reverted that the chain shows landed, or
 * unknown with no hash when the chain could not be read to tell.
 */
export type RefundOutcome =
  | Exclude<CallOutcome, { status: 'mined' | 'unknown' }>
  | { status: 'mined' | 'unknown'; transaction: Hex | null; message?: string };

/**
 * Sends a refund under its record (`id`, the network's slot, holding the refund's channel): what it
 * does written first, then the transaction; mined, the mirror and the refund's attempt follow in one
 * database transaction; refused, reverted or never sent, the channel is let go and the attempt
 * released. Answered refused or reverted, the chain is asked first (docs/decisions.md#D-355): a
 * refund whose nonce the chain counts past its own landed all the same (sent, its answer lost) and
 * is applied as mined; one the chain cannot be read for is left unknown. Sent with its outcome
 * unknown (or an error after it may have gone out), the record stays open for the sessions worker
 * to follow (follow-transactions.ts), the channel held by it.
 */
export async function sendRefund(
  sql: ReturnType<typeof sqlOf>,
  sessions: SessionRail,
  id: string,
  item: RefundItem,
  input: Parameters<SessionRail['refund']>[0],
): Promise<RefundOutcome> {
  await describeSessionTransaction(sql, id, item, input.amount);
  const apply = (tx: Sql, transaction: string | null) => applyRefund(tx, item, id, transaction);
  let sent: CallOutcome;
  try {
    sent = await sessions.refund(input);
  } catch (err) {
    if (err instanceof FacilitatorUnavailableError) {
      // Nothing was sent.
      await recordOutcome(sql, id, { status: 'failed', message: err.message }, apply);
      await endRefund(sql, item, id);
    }
    throw err;
  }
  if (sent.status === 'refused' || sent.status === 'reverted') {
    const landed = await refundLanded(sessions, item).catch(() => undefined);
    // Landed all the same (sent, its answer lost): applied as mined, its hash not known here (a reverted one did not refund).
    if (landed) {
      await recordOutcome(sql, id, { status: 'mined', transaction: null }, apply);
      return { status: 'mined', transaction: null };
    }
    if (landed === undefined) {
      // Not known whether it landed: the record stays open with the channel held, followed by the worker.
      const unknown = {
        status: 'unknown' as const,
        transaction: sent.status === 'reverted' ? sent.transaction : null,
        message: `answered ${sent.status}; the chain could not be read to tell whether it landed`,
      };
      await recordOutcome(sql, id, { ...unknown, transaction: unknown.transaction as Hex }, apply);
      return unknown;
    }
  }
  await recordOutcome(sql, id, sent, apply);
  if (sent.status === 'refused' || sent.status === 'reverted') await endRefund(sql, item, id);
  return sent;
}

/** How long a refund's record holds its channel: past the time its outcome is followed for (docs/decisions.md#D-303). */
export const REFUND_HOLD_MS = FOLLOW_GIVE_UP_MS + 60_000;

/** Hands the channel's hold from the payer's attempt to the refund's record, for as long as its outcome may take. */
async function holdForRefund(sql: Sql, channelId: string, recordId: string, attemptId: string): Promise<void> {
  await sql.run(Prisma.sql`UPDATE "SessionChannel" SET "heldBy" = ${recordId}, "heldUntil" = ${new Date(Date.now() + REFUND_HOLD_MS)}
    WHERE "id" = ${channelId} AND "heldBy" = ${attemptId}`);
}

/**
 * A refund that ended: its channel let go (held by its record, or still by its attempt) and, a
 * payer's refund, its attempt released, charged nothing: when it was mined, as the scheme's refund
 * (`session_refund`), with its transaction when known. Only what is still so changes: a second end
 * of the same refund does nothing.
 */
export async function endRefund(tx: Sql, item: RefundItem, recordId: string, mined?: { transaction: string | null }): Promise<void> {
  const holders = item.attemptId ? [recordId, item.attemptId] : [recordId];
  await tx.run(Prisma.sql`UPDATE "SessionChannel" SET "heldBy" = NULL, "heldUntil" = NULL
    WHERE "id" = ${item.channelId} AND "heldBy" IN (${Prisma.join(holders)})`);
  if (!item.attemptId) return;
  await moveAttempt(tx, item.attemptId, {
    to: 'released',
    from: ['in_flight'],
    set: {
      chargedMicros: 0n,
      ...(mined ? { settlementReason: 'session_refund', ...(mined.transaction ? { refundTxHash: mined.transaction } : {}) } : {}),
    },
  });
}

/**
 * A mined refund, in the mirror: the channel's claimed total raised to what was charged, its
 * balance and refund nonce moved on; and the refund ended (`endRefund`) in the same transaction.
 */
export async function applyRefund(tx: Sql, item: RefundItem, recordId: string, transaction: string | null): Promise<void> {
  const totalClaimed = BigInt(item.totalClaimed);
  await tx.run(Prisma.sql`UPDATE "SessionChannel" SET "balance" = ${BigInt(item.balance)},
      "totalClaimed" = CASE WHEN "totalClaimed" < ${totalClaimed} THEN ${totalClaimed} ELSE "totalClaimed" END,
      "refundNonce" = ${Number(item.refundNonce) + 1}, "updatedAt" = ${new Date()},
      "claimRefusedAt" = CASE WHEN "totalClaimed" < ${totalClaimed} THEN NULL ELSE "claimRefusedAt" END
    WHERE "id" = ${item.channelId} AND "refundNonce" <= ${Number(item.refundNonce)}`);
  await endRefund(tx, item, recordId, { transaction });
}

/** True when the chain counts the channel's refund nonce past the refund's: it landed. */
export async function refundLanded(sessions: SessionRail, item: RefundItem): Promise<boolean> {
  return (await sessions.refundNonce(item.channelId as Hex)) > BigInt(item.refundNonce);
}
