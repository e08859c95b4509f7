import type { Hex } from 'viem';
import type { Network, PaymentPayload, SettleResponse, VerifyResponse } from '../../shared/payments/x402-wire.js';

/**
 * Why a payment did not verify or settle: one table, codes derived from it. These travel as
 * `settlementReason` in hub's error bodies and as `invalidReason` / `errorReason` in x402 bodies
 * that hub's own facilitator writes.
 */

export const verifyFailureReasons = {
  invalid_payload: 'The payment is not a well-formed x402 v2 exact-EVM payment.',
  unsupported_scheme: 'Only the exact scheme is accepted.',
  wrong_network: 'The payment is for another network.',
  wrong_asset: 'The payment is in a token this facilitator does not settle.',
  wrong_payee: 'The authorization pays someone other than the payee.',
  amount_mismatch: 'The authorized amount differs from the price.',
  authorization_expired: 'The authorization expires before it could be settled.',
  authorization_not_yet_valid: 'The authorization is not valid yet.',
  invalid_signature: 'The signature is not the payer’s signature of this authorization.',
  insufficient_funds: 'The payer’s token balance is below the amount.',
  nonce_already_used: 'This authorization has already been used or canceled.',
  facilitator_rejected: 'The facilitator refused the payment for a reason hub does not know.',
} as const;

export const settleFailureReasons = {
  ...verifyFailureReasons,
  transaction_reverted: 'The transfer reverted on chain.',
  transaction_rejected: 'The chain’s node refused the transfer transaction.',
  facilitator_unavailable: 'The facilitator or the chain could not be reached; nothing was submitted.',
} as const;

/**
 * Failures that say nothing of an earlier submission of the same payment: the facilitator (or the
 * chain, or hub's own rail) was not reached, or refused without saying why. Final for a first
 * settlement; for one tried again because an earlier answer was lost, that earlier one may have
 * gone through, so they leave it settling.
 */
export const SAYS_NOTHING_OF_EARLIER: ReadonlySet<string> = new Set([
  'facilitator_unavailable',
  'facilitator_rejected',
  'payment_not_settleable',
  'rail_not_configured',
]);

export type VerifyFailureReason = keyof typeof verifyFailureReasons;
export type SettleFailureReason = keyof typeof settleFailureReasons;

/** x402's reason for a settlement broadcast whose outcome is not known yet. */
export const SETTLEMENT_PENDING = 'settlement_pending';

export function isVerifyFailureReason(value: string): value is VerifyFailureReason {
  return Object.hasOwn(verifyFailureReasons, value);
}

export function isSettleFailureReason(value: string): value is SettleFailureReason {
  return Object.hasOwn(settleFailureReasons, value);
}

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
  /**
   * Submitted (or possibly submitted) but unconfirmed. Settle the same payment again to finish it;
   * unless `unresolvable`: then settling again cannot tell either (only the chain can), and the
   * settlement is parked as it stands, for whoever can read the chain.
   */
  | { status: 'pending'; transaction: Hex | undefined; network: Network; payer?: string; message: string; unresolvable?: true }
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

/**
 * Between hub's results and x402's wire responses. Outbound, hub's reason codes go on the wire
 * as they are; inbound, the reasons of `@x402/evm` facilitators are mapped onto hub's, and any
 * other reason becomes `facilitator_rejected` with the original kept in the message.
 */

const fromX402Reason: Record<string, SettleFailureReason> = {
  invalid_exact_evm_scheme: 'unsupported_scheme',
  invalid_exact_evm_network_mismatch: 'wrong_network',
  invalid_exact_evm_missing_eip712_domain: 'wrong_asset',
  invalid_exact_evm_token_name_mismatch: 'wrong_asset',
  invalid_exact_evm_token_version_mismatch: 'wrong_asset',
  invalid_exact_evm_eip3009_not_supported: 'wrong_asset',
  asset_not_deployed_contract: 'wrong_asset',
  invalid_exact_evm_recipient_mismatch: 'wrong_payee',
  invalid_exact_evm_authorization_value: 'amount_mismatch',
  invalid_exact_evm_payload_authorization_value_mismatch: 'amount_mismatch',
  invalid_exact_evm_payload_authorization_valid_before: 'authorization_expired',
  invalid_exact_evm_payload_authorization_valid_after: 'authorization_not_yet_valid',
  invalid_exact_evm_signature: 'invalid_signature',
  invalid_exact_evm_insufficient_balance: 'insufficient_funds',
  invalid_exact_evm_nonce_already_used: 'nonce_already_used',
  invalid_exact_evm_transaction_failed: 'transaction_reverted',
  invalid_exact_evm_transaction_simulation_failed: 'transaction_reverted',
};

function reasonFrom(wireReason: string | undefined): SettleFailureReason {
  if (!wireReason) return 'facilitator_rejected';
  if (isSettleFailureReason(wireReason)) return wireReason;
  return fromX402Reason[wireReason] ?? 'facilitator_rejected';
}

function detail(reason: SettleFailureReason, wireReason: string | undefined, wireMessage: string | undefined): string | undefined {
  if (reason !== 'facilitator_rejected') return wireMessage;
  return [wireReason, wireMessage].filter(Boolean).join(': ') || undefined;
}

export function toVerifyResponse(result: VerifyResult): VerifyResponse {
  if (result.isValid) return { isValid: true, payer: result.payer };
  return { isValid: false, invalidReason: result.reason, invalidMessage: result.message, ...(result.payer ? { payer: result.payer } : {}) };
}

/** `fallbackPayer`: the authorization's `from`, for facilitators that leave `payer` out. */
export function fromVerifyResponse(response: VerifyResponse, fallbackPayer = ''): VerifyResult {
  if (response.isValid) return { isValid: true, payer: response.payer ?? fallbackPayer };
  const mapped = reasonFrom(response.invalidReason);
  const reason = isVerifyFailureReason(mapped) ? mapped : 'facilitator_rejected';
  return verifyFailure(reason, response.payer, detail(reason, response.invalidReason, response.invalidMessage));
}

/** The x402 settle response for a result: also the body of the PAYMENT-RESPONSE header. */
export function toSettleResponse(result: SettleResult): SettleResponse {
  const payer = result.payer ? { payer: result.payer } : {};
  switch (result.status) {
    case 'settled':
      return { success: true, transaction: result.transaction, network: result.network, amount: result.amount, ...payer };
    case 'pending':
      return {
        success: false,
        errorReason: SETTLEMENT_PENDING,
        errorMessage: result.message,
        transaction: result.transaction ?? '',
        network: result.network,
        ...payer,
      };
    case 'failed':
      return {
        success: false,
        errorReason: result.reason,
        errorMessage: result.message,
        transaction: result.transaction ?? '',
        network: result.network,
        ...payer,
      };
  }
}

/** `fallback`: the authorized amount and payer, for facilitators that leave them out. */
export function fromSettleResponse(response: SettleResponse, fallback: { amount: string; payer: string }): SettleResult {
  const transaction = /^0x[0-9a-fA-F]{64}$/.test(response.transaction) ? (response.transaction as Hex) : undefined;
  if (response.success && transaction) {
    return {
      status: 'settled',
      transaction,
      network: response.network,
      payer: response.payer ?? fallback.payer,
      amount: response.amount ?? fallback.amount,
    };
  }
  if (response.success || response.errorReason === SETTLEMENT_PENDING) {
    // "success" without a transaction hash cannot be checked on chain: treat it as unconfirmed.
    return {
      status: 'pending',
      transaction,
      network: response.network,
      message: response.errorMessage ?? 'The facilitator reported no confirmed transaction.',
      ...(response.payer ? { payer: response.payer } : {}),
    };
  }
  const reason = reasonFrom(response.errorReason);
  return settleFailure(reason, {
    network: response.network,
    payer: response.payer,
    transaction,
    message: detail(reason, response.errorReason, response.errorMessage),
  });
}

/** The payer an exact-EVM payload names, without validating the rest of it. */
export function payerOf(paymentPayload: PaymentPayload): string {
  const from = (paymentPayload.payload as { authorization?: { from?: unknown } }).authorization?.from;
  return typeof from === 'string' ? from : '';
}
