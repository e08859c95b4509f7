import { ApiError } from '../../shared/errors.js';
import type { PaymentRequirements } from '../../shared/payments/x402-wire.js';
import type { MirroredChannel } from './channel-mirror.js';

/**
 * A channel's snapshot as the scheme sends it (a corrective 402's `channelState`, a paid answer's
 * `payment-response`). hub takes neither timed withdrawals nor refunds yet, so none is pending and
 * no refund nonce has moved.
 */
export function channelState(channelId: string, channel: Pick<MirroredChannel, 'balance' | 'totalClaimed' | 'charged'>) {
  return {
    channelId,
    balance: channel.balance.toString(),
    totalClaimed: channel.totalClaimed.toString(),
    withdrawRequestedAt: 0,
    refundNonce: '0',
    chargedCumulativeAmount: channel.charged.toString(),
  };
}

/**
 * A session payment refused with the scheme's code: 402 `payment_required` (`settlement_failed`,
 * the code in `settlementReason`), carrying the requirements to pay again with, which the proxy
 * also sends as the x402 document in `payment-required` with the code as its `error`. A corrective
 * refusal adds the channel's state and the payer's last voucher to them, so a client that lost
 * its own state takes hub's and pays again.
 */
export function sessionRefusal(
  code: string,
  requirements: PaymentRequirements,
  state?: { channel: ReturnType<typeof channelState>; voucher?: { signedMaxClaimable: string; signature: string } },
): ApiError {
  const accepted = state
    ? {
        ...requirements,
        extra: { ...requirements.extra, channelState: state.channel, ...(state.voucher ? { voucherState: state.voucher } : {}) },
      }
    : requirements;
  return new ApiError('payment_required', 'settlement_failed', { settlementReason: code, x402Version: 2, accepts: [accepted] });
}
