/**
 * The one table of error codes: every code hub puts in an `{ error, reason? }` envelope, with its
 * HTTP status and a default human-readable reason. Codes named by the interface spec come first,
 * grouped as the spec groups them; codes hub adds where the spec is silent follow, and are listed
 * in docs/decisions.md.
 *
 * A code with `reserved` is named by the spec for work not built yet (it says which); nothing
 * raises it until that work lands. Every other code is raised somewhere, which
 * test/shared/error-codes.test.ts checks.
 */
export const errorCodes = {
  // Management API (spec: Errors › Management API)
  missing_bearer_token: { status: 401, reason: 'Send Authorization: Bearer <token>.' },
  invalid_token: { status: 401, reason: 'The token is unknown, revoked or expired.' },
  auth_type_not_allowed: { status: 403, reason: 'This route does not accept this kind of credential.' },
  insufficient_scope: { status: 403, reason: 'The API key lacks the scope this route needs.' },
  organization_required: { status: 403, reason: 'Select an organization first.' },
  organization_permission_required: { status: 403, reason: 'You may not act on this organization.' },
  seller_not_found: { status: 404, reason: 'No such seller.' },
  service_not_found: { status: 404, reason: 'No such service.' },
  meter_not_found: { status: 404, reason: 'No such meter.' },
  plan_not_found: { status: 404, reason: 'No such plan.' },
  plan_meter_price_not_found: { status: 404, reason: 'No such plan meter price.' },
  signing_secret_not_found: { status: 404, reason: 'No such signing secret.' },
  duplicate_slug: { status: 409, reason: 'That slug already exists in this scope.' },
  duplicate_key: { status: 409, reason: 'That meter key already exists on the service.' },
  duplicate_plan_meter_price: { status: 409, reason: 'The plan already prices this meter.' },
  payg_price_not_whole_cents: { status: 422, reason: 'A pay-as-you-go price must be a whole number of cents.' },
  checkout_incomplete: { status: 409, reason: 'The checkout session is not complete yet.' },

  // Usage endpoints (spec: Errors › Usage endpoints, report failures)
  access_not_found: { status: 404, reason: 'No live request, purchase or payment stands behind this request id.' },
  access_inactive: { status: 402, reason: 'The access is canceled or its period has not started.' },
  plan_expired: { status: 402, reason: 'The access period has ended.' },
  usage_exhausted: { status: 402, reason: 'Credit or included allowance has run out.' },
  meter_not_priced: { status: 409, reason: 'The plan does not price this meter.' },

  // Seller API bodies (spec: Bodies the seller's API returns to the service)
  invalid_zeroclick_signature: { status: 401, reason: 'The request signature is missing, stale or invalid.' },
  allowance_unavailable: { status: 503, reason: 'The allowance API is unreachable.' },
  // The account routes answer a bad signature with its reason as the code (spec: Seller account endpoint).
  missing_or_malformed_signature: { status: 401, reason: 'The hub-signature header is missing or malformed.' },
  stale_timestamp: { status: 401, reason: 'The signature timestamp is more than 300 seconds from now.' },
  unknown_kid: { status: 401, reason: 'The signature names a signing secret this seller does not hold.' },
  invalid_signature: { status: 401, reason: 'The signature does not match the request.' },

  // Pay URL (spec: Errors agents see at the pay URL)
  invalid_request: { status: 400, reason: 'Malformed request body.' },
  amount_required: { status: 400, reason: 'A credit plan purchase needs amountUsd.' },
  payg_not_purchasable: { status: 400, reason: 'Pay-as-you-go plans are paid per call, not purchased.' },
  amount_not_cent_increment: { status: 400, reason: 'amountUsd must be a whole number of cents.' },
  amount_below_minimum: { status: 400, reason: 'amountUsd is below the plan minimum.' },
  encryption_not_configured: { status: 400, reason: 'The seller publishes no encryption keys.' },
  invalid_compact_jwe: { status: 400, reason: 'The body is not a five-segment Compact JWE.' },
  unsupported_jwe_suite: { status: 400, reason: 'The JWE is not in the seller’s suite.' },
  jwe_kid_required: { status: 400, reason: 'The protected header names no kid.' },
  unknown_jwe_kid: { status: 400, reason: 'The kid is not in the seller’s JWKS.' },
  private_reply_jwk: { status: 400, reason: 'The reply JWK carries private key material.' },
  invalid_reply_jwk: { status: 400, reason: 'The reply JWK is not a public P-256 key.' },
  bearer_required: { status: 401, reason: 'A registered agent credential is needed.' },
  payment_required: { status: 402, reason: 'Payment is required.' },
  signing_secret_required: { status: 409, reason: 'The seller has no active signing secret.' },
  payment_request_mismatch: { status: 409, reason: 'The paid retry differs from the challenged request.' },
  payment_request_already_completed: { status: 409, reason: 'This payment has already been used for a delivered request.' },
  payment_request_in_flight: { status: 409, reason: 'Another request with this payment is in flight.' },
  payment_amount_mismatch: { status: 409, reason: 'amountUsd differs from the paid challenge.' },
  usage_not_priced: { status: 409, reason: 'No pay-as-you-go plan prices this usage.' },
  entitlements_not_available: { status: 501, reason: 'This storefront sells no plans or top-ups.' },
  capped_pricing_unavailable: { status: 503, reason: 'Ceiling pricing needs a rail that can pay actual usage.' },

  // hub's own codes, where the spec shows none (docs/decisions.md)
  not_found: { status: 404, reason: 'No such route.' },
  method_not_allowed: { status: 405, reason: 'Method not allowed on this route.' },
  api_key_not_found: { status: 404, reason: 'No such API key.' },
  organization_not_found: { status: 404, reason: 'No such organization.' },
  membership_not_found: { status: 404, reason: 'No such member of this organization.' },
  duplicate_member: { status: 409, reason: 'That user is already a member of this organization.' },
  last_admin: { status: 409, reason: 'An organization keeps at least one admin.' },
  invitation_not_found: { status: 404, reason: 'No such invitation: the link is wrong, was used, revoked or replaced.' },
  invitation_expired: { status: 410, reason: 'This invitation has expired; ask for a new one.' },
  duplicate_hostname: { status: 409, reason: 'That hostname already serves a seller.' },
  encryption_key_not_found: { status: 404, reason: 'No such encryption key.' },
  invalid_credentials: { status: 401, reason: 'Email or password is wrong.' },
  csrf_check_failed: {
    status: 403,
    reason: 'A write signed in by the session cookie must send the x-hub-csrf header with the __Host-hub_csrf cookie’s value.',
  },
  idempotency_key_reused: { status: 409, reason: 'This idempotency key was used with a different body.' },
  resource_in_use: { status: 409, reason: 'Delete or move what depends on this resource first.' },
  request_timeout: { status: 408, reason: 'The request arrived too slowly.' },
  http_version_not_supported: { status: 505, reason: 'This server speaks HTTP/1.0 and HTTP/1.1 on this port.' },
  transfer_encoding_not_supported: { status: 501, reason: 'Transfer-Encoding must be exactly chunked, or absent.' },
  rate_limited: { status: 429, reason: 'Too many requests of this kind; try again later.' },
  trial_already_claimed: { status: 409, reason: 'This free plan has been taken already by you.' },
  trial_claims_exhausted: { status: 409, reason: 'This free plan has opened as many accounts as its seller allows.' },
  account_write_not_found: { status: 404, reason: 'No such account write.' },
  account_write_not_failed: { status: 409, reason: 'Only a failed account write is re-sent.' },
  account_not_provisioned: { status: 409, reason: 'The seller has not set this account up yet; retry after retryAfterSeconds.' },
  key_mint_refused: { status: 409, reason: 'The seller refused to mint a key; sellerCode says why.' },
  key_mint_failed: { status: 502, reason: 'The seller could not mint a key.' },
  agent_already_claimed: { status: 409, reason: 'Another person owns this agent; they must release it first.' },
  payload_too_large: { status: 413, reason: 'The request body is larger than this server accepts.' },
  unsupported_media_type: { status: 415, reason: 'Send a JSON body with Content-Type: application/json.' },
  upstream_unreachable: { status: 502, reason: 'The seller’s API could not be reached.' },
  upstream_error: { status: 502, reason: 'The seller’s API broke off the response.' },
  upstream_timeout: { status: 504, reason: 'The seller’s API did not answer in time.' },
  upstream_not_allowed: { status: 422, reason: 'hub does not connect to that address.' },
  loop_detected: { status: 508, reason: 'The request came back to the hub that forwarded it.' },
  service_unavailable: { status: 503, reason: 'A dependency is unavailable; try again shortly.' },
  held_payment_unavailable: {
    status: 503,
    reason: 'This seller sells accounts, which needs a payment rail that can hold the payment until the seller has the account.',
  },
  // Sandbox endpoints (docs/decisions.md#D-229)
  seller_not_in_sandbox: { status: 409, reason: 'The seller takes live traffic; sandbox routes act on sandbox sellers only.' },
  test_agent_not_found: { status: 404, reason: 'No such sandbox test agent.' },
  payment_not_found: { status: 404, reason: 'No such payment.' },
  refund_not_available: {
    status: 501,
    reason: 'hub does not take back a settled payment on request: a card payment is refunded only when its account write fails for good.',
  },
  // Card payments through the provider (docs/decisions.md#D-239)
  card_payments_not_configured: {
    status: 503,
    reason: 'Card payments are not configured: set HUB_STRIPE_SECRET_KEY, HUB_STRIPE_PUBLISHABLE_KEY and HUB_STRIPE_WEBHOOK_SECRET.',
  },
  card_provider_unavailable: { status: 503, reason: 'The card provider did not answer in time or failed; nothing was changed, try again.' },
  card_provider_error: { status: 502, reason: 'The card provider refused the request.' },
  checkout_session_not_found: { status: 404, reason: 'No such checkout session in this organization.' },
  organization_plan_not_found: { status: 404, reason: 'hub offers no organization plan with that slug.' },
  invalid_webhook_signature: { status: 400, reason: 'The Stripe-Signature header is missing or does not verify.' },
  // The agentify endpoint (spec: Errors › agentify endpoint, further codes not shown)
  page_host_not_owned: { status: 422, reason: 'The page is not on a host this organization’s sellers own.' },
  page_unreachable: { status: 502, reason: 'The page could not be fetched.' },
  page_not_html: { status: 422, reason: 'The page is not HTML.' },
  page_too_large: { status: 422, reason: 'The page is larger than agentify converts.' },
} as const satisfies Record<string, { status: number; reason: string; reserved?: string }>;

export type ErrorCode = keyof typeof errorCodes;

/** The codes that may be raised: all but the reserved ones, so raising a reserved code does not compile. */
export type RaisableCode = { [C in ErrorCode]: (typeof errorCodes)[C] extends { reserved: string } ? never : C }[ErrorCode];

/**
 * What each code adds to its envelope beside `error` and `reason`: typed, so a field a client reads
 * (`retryAfterSeconds`, `accessId`) is the same name and type wherever the code is raised. A code
 * not named here adds nothing.
 */
type ErrorExtras = {
  /** How to register and get claimed (proxy/agents/agent-auth.ts › authRecipe). */
  bearer_required: { auth: AgentAuthRecipe };
  /**
   * A payment refused (`settlementReason`), or a call no per-call price covers but a plan on sale
   * does: where to buy it, and the account to top up when there is one.
   */
  payment_required: { settlementReason: string } | { manifestUrl: string; purchaseUrl: string; accessId?: string; topUpUrl?: string };
  amount_below_minimum: { minimumPurchaseUsd: string };
  rate_limited: { retryAfterSeconds: number };
  service_unavailable: { retryAfterSeconds?: number };
  account_not_provisioned: { retryAfterSeconds: number };
  key_mint_refused: { sellerCode: string };
  /** Present when the seller failed for now (hub retried within the agent's wait): when to try again. */
  key_mint_failed: { retryAfterSeconds?: number };
  page_unreachable: { pageStatus?: number };
  page_not_html: { contentType: string };
  page_too_large: { limitBytes?: number };
};

/** The `auth` block of `401 bearer_required`. */
export type AgentAuthRecipe = {
  scheme: string;
  tokenPrefix: string;
  proof: string;
  challengeUrl: string;
  registerUrl: string;
  steps: string[];
  claim: { url: string; steps: string[] };
};

export type ExtraOf<C extends ErrorCode> = C extends keyof ErrorExtras ? ErrorExtras[C] : Record<string, never>;

/** The spec's wire envelope. Pay URL errors may add `settlementReason`, `minimumPurchaseUsd` and the like. */
export type ErrorBody = { error: string; reason?: string } & Record<string, unknown>;

export const INTERNAL_ERROR_MESSAGE = 'Internal server error';

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(errorCodes, value);
}

export function statusOf(code: ErrorCode): number {
  return errorCodes[code].status;
}

/**
 * An error that belongs on the wire. Throw it anywhere below a route; the HTTP binding turns it
 * into `{ error, reason?, ...extra }` with `status`. Anything else thrown becomes a bare 500.
 */
class WireError extends Error {
  readonly status: number;
  readonly code: string;
  readonly reason: string | undefined;
  readonly extra: Record<string, unknown>;

  constructor(code: RaisableCode, reason?: string, extra: Record<string, unknown> = {}) {
    super(reason ?? errorCodes[code].reason);
    this.name = 'ApiError';
    this.code = code;
    this.status = errorCodes[code].status;
    this.reason = reason;
    this.extra = extra;
  }

  /**
   * A request validation failure: 400 with the human-readable message itself in `error`, as the
   * spec's Errors section asks.
   */
  static validation(message: string): WireError {
    const err = new WireError('invalid_request', undefined);
    Object.assign(err, { code: message, message });
    return err;
  }

  /**
   * The error an envelope stands for, as another hub process answered it (the proxy reads the
   * control-plane's refusals this way): the same status and body go on to the caller.
   */
  static fromBody(status: number, body: ErrorBody): WireError {
    const { error, reason, ...extra } = body;
    const err = new WireError('invalid_request', typeof reason === 'string' ? reason : undefined);
    // Whatever the other process added, as it sent it: the code is its, not this table's entry.
    Object.assign(err, { extra, code: error, status, message: err.reason ?? (isErrorCode(error) ? errorCodes[error].reason : error) });
    return err;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.code };
    if (this.reason !== undefined) body.reason = this.reason;
    return { ...body, ...this.extra };
  }
}

/**
 * `ApiError`, constructed with the extra fields its code carries (`ErrorExtras`): a code's fields
 * cannot be misspelled or mistyped where it is raised.
 */
export const ApiError = WireError as {
  new <C extends RaisableCode>(code: C, reason?: string, extra?: ExtraOf<C>): WireError;
} & Pick<typeof WireError, 'validation' | 'fromBody' | 'prototype'>;
export type ApiError = WireError;

/** Status and body for anything thrown: an `ApiError` as itself, everything else as a bare 500. */
export function errorResponse(err: unknown): { status: number; body: ErrorBody } {
  if (err instanceof ApiError) return { status: err.status, body: err.toBody() };
  return { status: 500, body: { error: INTERNAL_ERROR_MESSAGE } };
}
