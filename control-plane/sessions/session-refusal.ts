import { ApiError } from '../../shared/errors.js';
import type { PaymentRequirements } from '../../shared/payments/x402-wire.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator.js';
import type { MirroredChannel } from './channel-mirror.js';

/**
 * A channel's snapshot as the scheme sends it (a corrective 402's `channelState`, a paid answer's
 * `payment-response`); `withdrawRequestedAt` as hub's sessions worker last saw it on chain.
 */
export function channelState(
  channelId: string,
  channel: Pick<MirroredChannel, 'balance' | 'totalClaimed' | 'charged' | 'refundNonce' | 'withdrawRequestedAt'>,
) {
  return {
    channelId,
    balance: channel.balance.toString(),
    totalClaimed: channel.totalClaimed.toString(),
    withdrawRequestedAt: channel.withdrawRequestedAt,
    refundNonce: String(channel.refundNonce),
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

/** A chain that did not answer while a session payment needed it: 503, the same payment may be sent again. */
export function unreadable(err: unknown): never {
  if (err instanceof FacilitatorUnavailableError) {
    throw new ApiError(
      'service_unavailable',
      'The channel could not be read: the chain did not answer. Send the same payment again shortly.',
    );
  }
  throw err;
}
