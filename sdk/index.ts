/**
 * hub's seller SDK: what a seller runs in its own API to verify hub's signed requests, keep
 * per-buyer accounts from hub's account writes, mint keys, and ask for (and report) usage.
 * See sdk/README.md.
 */

// Verifying requests from hub
export { HUB_HEADERS, headerValue } from '../shared/hub-headers.js';
export { hubIdentity, type HubIdentity } from './identity.js';
export type { SigningSecrets } from './secrets.js';
export { checkSignedRequest, readAndCheck, type VerifyOptions, type SignedRequestParts, type RequestCheck } from './verify-request.js';
export { rejection, type RequestFailure } from './rejection.js';
export { withHubSignature, sendError, sendJson, type HubRequestHandler, type VerifiedRequest } from './node.js';
export { hubExpress, expressRoute } from './express.js';
export { hubFastify } from './fastify.js';
export { BodyTooLargeError, DEFAULT_MAX_BODY_BYTES } from './raw-body.js';
export { sha256Hex } from '../shared/signature.js';
/** Money is integer micro-USD inside; these read and write the six-decimal strings at the edges. */
export { formatUsd, parseUsd } from '../shared/money.js';

// Asking for payment and settling usage
export { paymentRequiredBody, identityRequiredBody, PAYMENT_REQUIRED_STATUS, type PaymentRequiredBody } from './payment-required.js';
export { usageHeaderValue, setUsageHeader, parseUsageHeader, type UsageHeaderItem } from './usage-header.js';
export { MAX_USAGE_QUANTITY, isUsageQuantity } from '../shared/usage.js';
export {
  createUsageClient,
  UsageApiError,
  USAGE_DENIAL_REASONS,
  type UsageClient,
  type UsageClientOptions,
  type UsageCheckItem,
  type UsageCheckRequest,
  type UsageCheckResult,
  type UsageDenialReason,
  type UsageReportRequest,
  type UsageReportResult,
} from './usage-client.js';

// Accounts (stateful sellers)
export {
  isServiceable,
  spendCredit,
  countPeriodUsage,
  type Account,
  type AccountPlan,
  type AccountStatus,
  type BillingMode,
  type PlanInterval,
} from './account/account.js';
export {
  createAccountEndpoint,
  DEFAULT_ACCOUNT_PATH,
  type AccountEndpoint,
  type AccountEndpointOptions,
  type MintContext,
  type WriteEvent,
} from './account/endpoint.js';
export { applyAccountWrite, type AppliedWrite, type WriteOutcome } from './account/netting.js';
export { parseAccountWrite, type AccountWrite } from './account/write-body.js';
export { parseMintRequest, type MintRequest } from './account/mint-body.js';
export { MAX_RETRY_AFTER_SECONDS, DEFAULT_MINT_RETRY_SECONDS, type MintDecision, type WriteReply } from './account/replies.js';
export { accountsFor } from './account/release.js';
export type { AccountStore } from './account/store.js';
export { MemoryAccountStore } from './account/memory-store.js';
export { SqliteAccountStore } from './account/sqlite-store.js';
