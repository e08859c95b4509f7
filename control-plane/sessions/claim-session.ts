import type { Hex } from 'viem';
import type { ClaimedPayment, ClaimInput } from '../../shared/contract.js';
import type { ApiError } from '../../shared/errors.js';
import { evmChainIdOf } from '../../shared/payments/evm-network.js';
import { type PaymentRequirements, type SessionPayload, sessionPayloadSchema } from '../../shared/payments/x402-wire.js';
import type { Db } from '../db/client.js';
import { type Sql, sqlOf } from '../db/sql.js';
import { claimAttempt, openAttempt } from '../payments/attempt-claim.js';
import type { Attempt } from '../payments/attempt-rows.js';
import { paymentSeller } from '../payments/payment-seller.js';
import type { PaymentRail } from '../payments/rail.js';
import { type ChannelConfig, channelIdOf, voucherDigest } from './channel-digests.js';
import { holdChannel, type MirroredChannel, mirrorBalance, mirrorChannel, readChannel, releaseUnlessClaimed } from './channel-mirror.js';
import { claimRefused } from './claim-vouchers.js';
import { followOpenTransaction, NEVER } from './follow-transactions.js';
import { refundSession } from './refund-session.js';
import { submitDeposit } from './session-deposit.js';
import { channelState, sessionRefusal, unreadable } from './session-refusal.js';
import { sessionRequirements, sessionsOn } from './session-requirements.js';
import { signedForChannel } from './voucher-signature.js';
import { chainSeconds, withdrawalDue } from './watch-withdrawals.js';

/**
 * Admits a paid retry that pays with a batch-settlement session, all in hub: the payload is the
 * scheme's, its channel is this seller's with hub's terms, the voucher is signed by the channel's
 * payer authorizer (recovered locally), and its ceiling is exactly what hub charged on the channel
 * plus this call's price, within the channel's balance. A deposit is submitted first (hub's
 * settler pays the gas); a refund is done here, nothing forwarded (refund-session.ts). The channel is held for this request until it settles, so requests on
 * one channel take turns. Any refusal leaves the attempt open and the channel as it was, and
 * nothing is forwarded. `read` is the attempt the retry names, as the caller read it.
 */
export async function claimSessionPayment(
  db: Db,
  rail: PaymentRail | undefined,
  read: Attempt | undefined,
  input: ClaimInput,
  holdMs: number,
): Promise<ClaimedPayment> {
  const sql = sqlOf(db);
  const { attempt, failed } = openAttempt(read, rail, input);
  const sessions = sessionsOn(rail);
  const seller = await paymentSeller(db, attempt.sellerId);
  // The seller's wallet: a ceiling-priced call's payTo is the escrow, which pays out to it.
  const receiver = attempt.payoutTo ?? attempt.payTo;
  if (!sessions || !seller?.x402Schemes.includes('batch-settlement') || attempt.kind !== 'call' || input.protocol !== 'x402') {
    throw failed('invalid_batch_settlement_evm_scheme');
  }
  const requirements = sessionRequirements(sessions, { id: attempt.id, amountMicros: attempt.amountMicros, receiver });
  const refuse = (code: string, state?: Parameters<typeof sessionRefusal>[2]) => sessionRefusal(code, requirements, state);
  const parsed = sessionPayloadSchema.safeParse(input.payload.payload);
  if (!parsed.success) throw refuse('invalid_batch_settlement_evm_voucher_payload');
  const payload = parsed.data;

  const chainId = evmChainIdOf(requirements.network);
  const config = payload.channelConfig as ChannelConfig;
  const termsRefusal = refusedTerms(config, requirements);
  if (termsRefusal) throw refuse(termsRefusal);
  const channelId = knownChannelId(config, chainId);
  if (payload.voucher.channelId.toLowerCase() !== channelId) throw refuse('invalid_batch_settlement_evm_channel_id_mismatch');
  const maxClaimable = BigInt(payload.voucher.maxClaimableAmount);
  const digest = voucherDigest(channelId, maxClaimable, chainId);
  if (!(await signedForChannel(sessions.sessions, config, digest, payload.voucher.signature as Hex).catch(unreadable))) {
    throw refuse('invalid_batch_settlement_evm_voucher_signature');
  }

  const price = BigInt(requirements.amount);
  const claim = (tx: Sql, settleTxHash?: string) =>
    claimAttempt(tx, attempt, config.payer.toLowerCase(), {
      protocol: 'x402',
      paymentMethod: 'x402_session',
      paymentPayloadJson: JSON.stringify(input.payload),
      channelId,
      ...(settleTxHash ? { settleTxHash } : {}),
    });
  // A voucher alone on a channel hub mirrors (the usual call): held, checked and claimed in one
  // transaction, so a refusal lets the channel go with the rollback. Anything else (a deposit or
  // refund, which wait on the chain, a channel hub has not seen, one another request holds) takes
  // the hold on its own first.
  if (payload.type === 'voucher') {
    const claimed = await sql.transaction(async (tx) => {
      const channel = await holdChannel(tx, channelId, attempt.id, holdMs);
      if (!channel) return undefined;
      refuseCharge(channel, payload.type, maxClaimable, price, { channelId, network: requirements.network }, refuse);
      return claim(tx);
    });
    if (claimed) return claimed;
  }
  const channel = await heldChannel(sql, sessions, { channelId, attemptId: attempt.id, holdMs }, config, requirements.network, refuse);
  let settleTxHash: string | undefined;
  try {
    refuseCharge(channel, payload.type, maxClaimable, price, { channelId, network: requirements.network }, refuse);
    if (payload.type === 'refund') {
      const followOpen = () => followOpenTransaction(db, sessions, NEVER);
      return await refundSession(db, sessions, { attempt, claim, payload, config, channelId, channel, price, refuse, followOpen });
    }
    let balance = channel.balance;
    if (payload.type === 'deposit') {
      const deposited = await submitDeposit(sql, sessions.sessions, requirements.network, payload, config, channelId, refuse);
      settleTxHash = deposited.transaction;
      balance = deposited.balance;
      await mirrorBalance(sql, channelId, balance);
    }
    if (maxClaimable > balance) throw refuse('invalid_batch_settlement_evm_cumulative_exceeds_balance');
    // Held afresh with the claim: the chain's reads and a deposit took some of the hold, which must
    // last as long as the claimed call may (D-354).
    return await sql.transaction(async (tx) => {
      if (!(await holdChannel(tx, channelId, attempt.id, holdMs))) throw refuse('invalid_batch_settlement_evm_channel_busy');
      return claim(tx, settleTxHash);
    });
  } catch (err) {
    await releaseUnlessClaimed(sql, channelId, attempt.id);
    throw err;
  }
}

/**
 * Refuses a voucher the held channel cannot take: a charge while the payer's timed withdrawal can
 * be finalized by the chain's clock (it might never be claimed: D-309, D-335), a ceiling other than
 * what was charged (a refund's) or that plus this call's price (a call's), or a voucher alone above
 * the balance (the client counts a balance the channel no longer holds: hub refunded it idle, a
 * withdrawal was finalized; D-334). The last two refusals are the corrective 402: they carry the
 * channel's state and its latest voucher, for the client to resume from (and deposit again).
 */
function refuseCharge(
  channel: MirroredChannel,
  type: SessionPayload['type'],
  maxClaimable: bigint,
  price: bigint,
  on: { channelId: Hex; network: string },
  refuse: (code: string, state?: Parameters<typeof sessionRefusal>[2]) => ApiError,
): void {
  if (type !== 'refund' && withdrawalDue(channel, chainSeconds(on.network)))
    throw refuse('invalid_batch_settlement_evm_channel_withdrawing');
  // A wallet that no longer takes its voucher on chain is charged nothing more until a claim of it
  // goes through (a refund, which claims with a voucher signed now, may do that).
  if (type !== 'refund' && claimRefused(channel)) throw refuse('invalid_batch_settlement_evm_channel_busy');
  const expected = type === 'refund' ? channel.charged : channel.charged + price;
  if (maxClaimable === expected && !(type === 'voucher' && maxClaimable > channel.balance)) return;
  throw refuse('invalid_batch_settlement_evm_cumulative_amount_mismatch', {
    channel: channelState(on.channelId, channel),
    ...(channel.voucherSignature
      ? { voucher: { signedMaxClaimable: channel.signedMaxClaimable.toString(), signature: channel.voucherSignature } }
      : {}),
  });
}

/** Which of the channel's terms differ from the ones the 402 offered, as the scheme's refusal code. */
function refusedTerms(config: ChannelConfig, requirements: PaymentRequirements): string | undefined {
  const same = (a: string, b: unknown) => typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
  if (!same(config.receiver, requirements.payTo)) return 'invalid_batch_settlement_evm_receiver_mismatch';
  if (!same(config.token, requirements.asset)) return 'invalid_batch_settlement_evm_token_mismatch';
  if (!same(config.receiverAuthorizer, requirements.extra.receiverAuthorizer))
    return 'invalid_batch_settlement_evm_receiver_authorizer_mismatch';
  if (config.withdrawDelay !== requirements.extra.withdrawDelay) return 'invalid_batch_settlement_evm_withdraw_delay_mismatch';
  return undefined;
}

/**
 * Channel ids by config, for the configs seen lately: a channel's every voucher call names the same
 * config, and hashing it (two keccak rounds in JS) would be most of what checking a voucher costs
 * besides the recovery. At most `KEPT_CHANNEL_IDS`, the oldest dropped first.
 */
const channelIds = new Map<string, Hex>();
const KEPT_CHANNEL_IDS = 10_000;

function knownChannelId(config: ChannelConfig, chainId: number): Hex {
  const key =
    `${chainId}:${config.payer}:${config.payerAuthorizer}:${config.receiver}:${config.receiverAuthorizer}:${config.token}:${config.withdrawDelay}:${config.salt}`.toLowerCase();
  let id = channelIds.get(key);
  if (!id) {
    id = channelIdOf(config, chainId);
    if (channelIds.size >= KEPT_CHANNEL_IDS) channelIds.delete(channelIds.keys().next().value!);
    channelIds.set(key, id);
  }
  return id;
}

/**
 * The channel's mirror, held for this attempt. A channel hub has not seen is mirrored from the
 * chain first (a voucher on a channel with no balance there is refused: there is nothing to pay
 * from). Another request holding it is the scheme's `channel_busy`: the client tries again shortly.
 */
async function heldChannel(
  sql: ReturnType<typeof sqlOf>,
  sessions: NonNullable<ReturnType<typeof sessionsOn>>,
  { channelId, attemptId, holdMs }: { channelId: Hex; attemptId: string; holdMs: number },
  config: ChannelConfig,
  network: string,
  refuse: (code: string) => ApiError,
): Promise<MirroredChannel> {
  // Held and read in one statement in the usual case, a channel hub mirrors already.
  const held = await holdChannel(sql, channelId, attemptId, holdMs);
  if (held) return held;
  if (await readChannel(sql, channelId)) throw refuse('invalid_batch_settlement_evm_channel_busy');
  const onChain = await sessions.sessions.channel(channelId).catch(unreadable);
  await mirrorChannel(sql, channelId, network, config, onChain);
  const mirrored = await holdChannel(sql, channelId, attemptId, holdMs);
  if (!mirrored) throw refuse('invalid_batch_settlement_evm_channel_busy');
  return mirrored;
}
