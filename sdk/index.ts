/**
 * hub's seller SDK: what a seller runs in its own API to verify hub's signed requests, keep
 * per-buyer accounts from hub's account writes, mint keys, ask for (and report) usage, and report
 * the pages its site serves.
 * See sdk/README.md. The SQLite account store is its own entry point (`sqlite.ts`), so that only
 * sellers who use it need better-sqlite3.
 */

// Verifying requests from hub
export { HUB_HEADERS, headerValue } from '../shared/hub-headers.js';
/** Money is integer micro-USD inside; these read and write the six-decimal strings at the edges. */
export { formatUsd, parseUsd } from '../shared/money.js';
export { sha256Hex } from '../shared/signature.js';
export { isUsageQuantity, MAX_USAGE_QUANTITY } from '../shared/usage.js';
// Accounts (stateful sellers)
export {
  type Account,
  type AccountPlan,
  type AccountStatus,
  type BillingMode,
  countPeriodUsage,
  isServiceable,
  type PlanInterval,
  spendCredit,
} from './account/account.js';
export {
  type AccountEndpoint,
  type AccountEndpointOptions,
  createAccountEndpoint,
  DEFAULT_ACCOUNT_PATH,
  type MintContext,
  type WriteEvent,
} from './account/endpoint.js';
export { MemoryAccountStore } from './account/memory-store.js';
export { type MintRequest, parseMintRequest } from './account/mint-body.js';
export { type AppliedWrite, applyAccountWrite, type WriteOutcome } from './account/netting.js';
export { accountsFor } from './account/release.js';
export { DEFAULT_MINT_RETRY_SECONDS, MAX_RETRY_AFTER_SECONDS, type MintDecision, type WriteReply } from './account/replies.js';
export type { AccountStore } from './account/store.js';
export { type AccountWrite, parseAccountWrite } from './account/write-body.js';
export { expressRoute, hubExpress } from './express.js';
export { hubFastify } from './fastify.js';
export { type HubIdentity, hubIdentity } from './identity.js';
export { type HubRequestHandler, sendError, sendJson, type VerifiedRequest, withHubSignature } from './node.js';
// Reporting the pages of the seller's site
export { pageViewsExpress } from './page-views/express.js';
export { pageViewsFastify } from './page-views/fastify.js';
export { withPageViews } from './page-views/node.js';
export { isPageContent, type ServedResponse } from './page-views/observe.js';
export type { PageView } from './page-views/report-body.js';
export {
  createPageViewReporter,
  type PageViewFailure,
  type PageViewReporter,
  type PageViewReporterOptions,
  type PageViewStats,
} from './page-views/reporter.js';
// Asking for payment and settling usage
export { identityRequiredBody, PAYMENT_REQUIRED_STATUS, type PaymentRequiredBody, paymentRequiredBody } from './payment-required.js';
export { BodyTooLargeError, DEFAULT_MAX_BODY_BYTES } from './raw-body.js';
export { type RequestFailure, rejection } from './rejection.js';
export type { SigningSecrets } from './secrets.js';
export {
  type AllowanceOutageCounts,
  type AllowanceOutageEvent,
  type AllowanceOutagePolicy,
  createUsageClient,
  USAGE_DENIAL_REASONS,
  type UsageCheckItem,
  type UsageCheckRequest,
  type UsageCheckResult,
  type UsageClient,
  type UsageClientOptions,
  type UsageDenialReason,
  type UsageReportRequest,
  type UsageReportResult,
} from './usage-client.js';
export { ALLOWANCE_UNAVAILABLE_STATUS, AllowanceUnavailableError, allowanceUnavailableBody, UsageApiError } from './usage-errors.js';
export { parseUsageHeader, setUsageHeader, type UsageHeaderItem, usageHeaderValue } from './usage-header.js';
export { checkSignedRequest, type RequestCheck, readAndCheck, type SignedRequestParts, type VerifyOptions } from './verify-request.js';
