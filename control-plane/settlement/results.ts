import type { Hex } from 'viem';
import type { Network } from '../../shared/payments/x402-wire.js';
import { settleFailureReasons, verifyFailureReasons, type SettleFailureReason, type VerifyFailureReason } from './reasons.js';

/**
 * What `Facilitator.verify` and `settle` return. Unlike x402's `{ success, errorReason }`, a settle
 * result has three states, because "broadcast, outcome unknown" must never be read as a failure:
 * the payer may have paid, so the request must neither be charged again nor answered with a 402.
 */

export type VerifyResult =
  | { isValid: true; payer: string }
  | { isValid: false; reason: VerifyFailureReason; message: string; payer?: string };

export type SettleResult =
  /**
   * `alreadySettled`: this call found the payment settled by an earlier call (whose answer was
   * pending or lost) instead of settling it now. Whether that is a retry or a replay is for the
   * caller's replay store to say.
   */
  | { status: 'settled'; transaction: Hex; network: Network; payer: string; amount: string; alreadySettled?: true }
  /** Submitted (or possibly submitted) but unconfirmed. Settle the same payment again to finish it. */
  | { status: 'pending'; transaction: Hex | undefined; network: Network; payer?: string; message: string }
  | { status: 'failed'; reason: SettleFailureReason; message: string; network: Network; payer?: string; transaction?: Hex };

export function verifyFailure(reason: VerifyFailureReason, payer?: string, message?: string): VerifyResult & { isValid: false } {
  return { isValid: false, reason, message: message ?? verifyFailureReasons[reason], ...(payer ? { payer } : {}) };
}

export function settleFailure(
  reason: SettleFailureReason,
  context: { network: Network; payer?: string | undefined; transaction?: Hex | undefined; message?: string | undefined },
): SettleResult & { status: 'failed' } {
  return {
    status: 'failed',
    reason,
    message: context.message ?? settleFailureReasons[reason],
    network: context.network,
    ...(context.payer ? { payer: context.payer } : {}),
    ...(context.transaction ? { transaction: context.transaction } : {}),
  };
}
