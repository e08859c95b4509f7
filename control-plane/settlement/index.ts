/**
 * Settlement: verifying and settling x402 exact-EVM payments. The proxy depends on `Facilitator`
 * and picks an implementation per deployment: `LocalFacilitator` (in process, against a JSON-RPC)
 * or `HttpFacilitator` (a remote x402 facilitator).
 */
export type { Facilitator } from './facilitator.js';
export { FacilitatorUnavailableError } from './facilitator-error.js';
export { LocalFacilitator, type LocalFacilitatorConfig } from './local-facilitator.js';
export { HttpFacilitator, type HttpFacilitatorConfig } from './http-facilitator.js';
export type { SettlementToken } from './exact-payment.js';
export type { SettleResult, VerifyResult } from './results.js';
export {
  settleFailureReasons,
  verifyFailureReasons,
  SETTLEMENT_PENDING,
  type SettleFailureReason,
  type VerifyFailureReason,
} from './reasons.js';
export { exactRequirements } from './requirements.js';
export { toSettleResponse, toVerifyResponse, fromSettleResponse, fromVerifyResponse } from './wire-results.js';
export * from '../../shared/payments/x402-wire.js';
export {
  transferAuthorizationDigest,
  transferWithAuthorizationTypes,
  type Eip712Domain,
  type TransferAuthorization,
} from './authorization-digest.js';
export { loadRecoverer, defaultRecoverer, type Recoverer, type RecovererChoice } from './recoverer.js';
export { inlineSignerRecovery, recoverAuthorizationSigner, type SignedAuthorization, type SignerRecovery } from './signer-recovery.js';
export { createRecoverPool, type RecoverPoolOptions } from './recover-pool.js';
export { defaultSignerRecovery } from './default-signer-recovery.js';
export { eip3009Abi } from './eip3009-abi.js';
