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
