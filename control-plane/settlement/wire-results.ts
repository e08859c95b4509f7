import type { Hex } from 'viem';
import { isSettleFailureReason, isVerifyFailureReason, SETTLEMENT_PENDING, type SettleFailureReason } from './reasons.js';
import { settleFailure, verifyFailure, type SettleResult, type VerifyResult } from './results.js';
import type { PaymentPayload, SettleResponse, VerifyResponse } from '../../shared/payments/x402-wire.js';

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
