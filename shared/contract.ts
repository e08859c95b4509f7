import { z } from 'zod';
import { paymentPayloadSchema, paymentRequirementsSchema, settleResponseSchema } from './payments/x402-wire.js';
import { publicJwk } from './schemas/encryption-keys.js';
import { usdOutput } from './schemas/fields.js';
import { route as routeSchema } from './schemas/routes.js';
import { MAX_SLUG_LENGTH, MAX_USAGE_ITEMS, MAX_USAGE_QUANTITY } from './usage.js';

/**
 * The contract between the proxy and the control-plane: every procedure the proxy calls, its input
 * schema (the control-plane validates it), the schema of its answer (the answer's type is inferred
 * from it; tests check every answer against it: shared/contract-outputs.ts), and the limits both
 * sides keep. Nothing else crosses between the two processes. A procedure that fails throws hub's
 * `ApiError`; it reaches the proxy as the spec's envelope and the proxy's client turns it back into
 * an `ApiError` (proxy/control-plane-client.ts), so a refusal needs no conversion on the way.
 */

// ─── Limits ─────────────────────────────────────────────────────────────────────────────────────

/** Records of one batch (created, and completed, each). */
export const MAX_RECORDS_PER_BATCH = 1_000;
/** A proxy holds at most this many distinct tallies (sellers × minutes × outcome) and sends them at once. */
export const MAX_TALLIES_PER_BATCH = 10_000;
/** Longest request path a record keeps. */
export const MAX_RECORDED_PATH = 2_048;
/** Longest request target a payment is bound to. */
export const MAX_PAYMENT_TARGET = 8_192;
/** How long the proxy waits for any call's answer (the longest is a key mint, held to the seller's 7 s). */
export const CONTROL_PLANE_CALL_TIMEOUT_MS = 10_000;
/**
 * How long `settlePaidRequest` waits for the chain before it answers `settling` and lets the
 * settlement finish behind the answer: well inside the proxy's wait, so a slow chain never costs
 * the agent the seller's answer it paid for.
 */
export const SETTLE_ANSWER_WITHIN_MS = 7_000;

const id = (prefix: string) => z.string().startsWith(prefix).max(64);
const anyId = z.string().max(64);
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
const slug = z.string().min(1).max(MAX_SLUG_LENGTH);
const quantity = z.number().int().min(0).max(MAX_USAGE_QUANTITY);

// What answers are made of. Answers are JSON: money is a six-decimal string of USD (a bigint of
// micro-USD inside, written by shared/money.ts › formatUsd), ids are strings, times are
// `Date.toISOString()` strings. Objects are strict: a field the schema does not name is a mismatch
// too, so nothing crosses unnoticed (x402's own shapes stay loose, as x402-wire.ts says why).
const someId = z.string().min(1).max(64);
const usd = usdOutput;
/** Micro-USD as the integer's decimal digits. */
const micros = z.string().regex(/^(?:0|[1-9][0-9]*)$/, 'must be an integer of micro-USD as a decimal string');
const isoTime = z.iso.datetime();
/** A wallet as hub keeps it: lowercased. */
const wallet = z.string().regex(/^0x[0-9a-f]{40}$/, 'must be a lowercased 20-byte hex address');
const count = z.number().int().min(0);

// ─── Catalog ────────────────────────────────────────────────────────────────────────────────────

/** What the proxy needs to serve a seller's pay URL, signing secrets included (newest first). */
export const paySellerSchema = z.strictObject({
  id: someId,
  organizationId: someId,
  slug: z.string().min(1),
  name: z.string(),
  upstreamBaseUrl: z.string().min(1),
  sandbox: z.boolean(),
  hostnames: z.array(z.string().min(1)),
  signingSecrets: z.array(z.strictObject({ kid: someId, secret: z.string().min(1) })),
  /** Active encryption keys, newest first, with the private scalar `d` opened (the proxy decrypts). */
  encryptionKeys: z.array(z.strictObject({ kid: someId, x: z.string().min(1), y: z.string().min(1), d: z.string().min(1) })),
  updatedAt: isoTime,
});
export type PaySeller = z.infer<typeof paySellerSchema>;

export const manifestEncryptionSchema = z.strictObject({
  alg: z.literal('ECDH-ES'),
  enc: z.literal('A256GCM'),
  /** The protected-header parameter that carries the agent's public reply JWK. */
  replyJwkParameter: z.string().min(1),
  /** Also served, without credentials, at this path of the pay URL. */
  jwksPath: z.string().min(1),
  jwks: z.strictObject({ keys: z.array(z.strictObject(publicJwk.shape)) }),
});
export type ManifestEncryption = z.infer<typeof manifestEncryptionSchema>;

/** `GET /manifest.json` on the pay URL. */
export const sellerManifestSchema = z.strictObject({
  seller: z.strictObject({ id: someId, slug: z.string().min(1), name: z.string() }),
  plans: z.array(
    z.strictObject({
      id: someId,
      slug: z.string().min(1),
      name: z.string(),
      serviceSlug: z.string().min(1),
      /** `standard`, or `free_trial` (opens without payment, once per buyer). */
      kind: z.string(),
      billingMode: z.string(),
      /** `none`, `month` or `year`. */
      interval: z.string(),
      purchasable: z.boolean(),
      basePriceUsd: usd,
      includedCreditUsd: usd,
      /**
       * Units a period that any of the plan's priced meters draws, unit for unit, after its own
       * included units and before credit; with the seller's label for them (`0`/null when none).
       */
      includedCreditUnits: count,
      includedCreditUnitLabel: z.string().nullable(),
      minimumPurchaseUsd: usd,
      /** Who may open it without paying: `off`, `required` (a claimed agent with a verified email), `requested`. */
      verifiedEmailPolicy: z.string(),
      /** How many accounts of this plan a seller grants in all, when bounded. */
      maxClaims: count.nullable(),
      prices: z.array(
        z.strictObject({
          meterSlug: z.string().min(1),
          unit: z.string(),
          priceUsd: usd,
          unitSize: count,
          includedUnits: count,
          defaultMaxQuantity: count.nullable(),
        }),
      ),
    }),
  ),
  /** How to encrypt a request to this seller end to end; null while it publishes no key. */
  encryption: manifestEncryptionSchema.nullable(),
});
export type SellerManifest = z.infer<typeof sellerManifestSchema>;

// ─── Discovery ──────────────────────────────────────────────────────────────────────────────────

/**
 * What the pay URL's discovery documents are made from (shared/discovery/): the seller's declared
 * routes, each priced as its 402 would be, the prices and plans an agent can buy, and how a call is
 * paid here. The documents themselves are rendered where they are served, for the origin asked.
 */
export const discoveryCatalogSchema = z.strictObject({
  seller: z.strictObject({ id: someId, slug: z.string().min(1), name: z.string() }),
  /** How a call is paid: null while this hub takes no payments or the seller has no payout wallet. */
  payment: z
    .strictObject({
      network: z.string().min(1),
      asset: z.string().min(1),
      decimals: count,
      payTo: z.string().min(1),
      maxTimeoutSeconds: count,
    })
    .nullable(),
  /** Storefront sales are on: plans can be bought at `POST /extend`. */
  salesEnabled: z.boolean(),
  routes: z.array(
    z.strictObject({
      serviceSlug: z.string().min(1),
      route: routeSchema,
      /** What one call costs on the service's pay-as-you-go plan; null when no such plan prices its usage. */
      price: z.strictObject({ planSlug: z.string().min(1), amountMicros: micros, amountUsd: usd }).nullable(),
    }),
  ),
  prices: z.array(
    z.strictObject({
      serviceSlug: z.string().min(1),
      planSlug: z.string().min(1),
      billingMode: z.string(),
      meterSlug: z.string().min(1),
      unit: z.string(),
      priceUsd: usd,
      unitSize: count,
      description: z.string().nullable(),
    }),
  ),
});
export type DiscoveryCatalog = z.infer<typeof discoveryCatalogSchema>;

// ─── Agents ─────────────────────────────────────────────────────────────────────────────────────

export const agentIdentitySchema = z.strictObject({
  agentId: someId,
  buyerId: someId.nullable(),
  claimed: z.boolean(),
  /** The owning buyer's email is verified (free mode needs it). */
  emailVerified: z.boolean(),
  /** A sandbox test agent's seller: the one pay URL it may call (docs/decisions.md#D-301). */
  sandboxSellerId: someId.nullable(),
});
export type AgentIdentity = z.infer<typeof agentIdentitySchema>;

export const registrationChallengeInput = z.object({ walletAddress: z.string().max(100), sellerSlug: z.string().max(100) });
export const registrationChallengeSchema = z.strictObject({ challengeId: id('regc_'), message: z.string().min(1), expiresAt: isoTime });
export type RegistrationChallenge = z.infer<typeof registrationChallengeSchema>;

export const registrationInput = z.object({ challengeId: z.string().max(64), signature: z.string().max(200) });
export const registrationSchema = z.strictObject({
  agentId: someId,
  buyerId: someId.nullable(),
  walletAddress: wallet,
  token: z.string().min(1),
});
export type Registration = z.infer<typeof registrationSchema>;

// ─── Agent claims ───────────────────────────────────────────────────────────────────────────────

export const claimRequestInput = z.object({
  agentId: anyId,
  sellerId: anyId,
  /** Already validated and lowercased by the proxy. */
  email: z.string().max(254),
  /** Scheme and host of the pay URL the agent asked on: the mailed links point there. */
  payOrigin: z.string().max(300),
});
export const claimRequestedSchema = z.strictObject({
  status: z.enum(['pending', 'claimed']),
  email: z.string().min(1),
  expiresAt: isoTime.nullable(),
});
export type ClaimRequested = z.infer<typeof claimRequestedSchema>;

/** A claim as its links show it to the human who opens them. */
export const claimViewSchema = z.strictObject({
  state: z.enum(['open', 'confirmed', 'released', 'expired', 'used', 'unknown', 'taken']),
  agentId: someId.optional(),
  walletAddress: wallet.optional(),
  email: z.string().min(1).optional(),
  sellerName: z.string().nullable().optional(),
  payOrigin: z.string().min(1).optional(),
});
export type ClaimView = z.infer<typeof claimViewSchema>;
export const claimLinkInput = z.object({ tokenHash: sha256Hex });

// ─── Storefront ─────────────────────────────────────────────────────────────────────────────────

/** `POST /extend` as the proxy read it: who buys, what, and the request a payment binds to. */
export const startPurchaseInput = z.object({
  sellerId: anyId,
  agentId: anyId,
  planId: anyId.optional(),
  amountUsd: z.string().max(40).optional(),
  accessId: anyId.optional(),
  method: z.string().max(16),
  pathAndQuery: z.string().max(MAX_PAYMENT_TARGET),
  bodyDigest: sha256Hex,
});

/**
 * An account (`hubacc_`) as its holder and its seller see it (the management API's `Account`,
 * shared/schemas/accounts.ts, is the same view as REST documents it).
 */
export const accountViewSchema = z.strictObject({
  accessId: someId,
  /** active | canceled | suspended */
  status: z.string(),
  /** pending | provisioning | active | failed: whether the seller has the account (stateful sellers) */
  provisioningState: z.string(),
  /** The newest account write's delivery; null for sellers that take none. */
  deliveryStatus: z.string().nullable(),
  agentId: someId,
  buyerId: someId.nullable(),
  plan: z.strictObject({ id: someId, slug: z.string().min(1), name: z.string(), billingMode: z.string(), interval: z.string() }),
  period: z.strictObject({ start: isoTime.nullable(), end: isoTime.nullable() }),
  creditGrantedUsd: usd.nullable(),
  creditReversedUsd: usd,
  balanceUsd: usd.nullable(),
  includedUnits: z.array(z.strictObject({ meterSlug: z.string().min(1), includedUnits: count, usedUnits: count })),
  /** The plan's credit units this period, shared by its priced meters; null when it grants none. */
  creditUnits: z.strictObject({ label: z.string().nullable(), includedUnits: count, usedUnits: count }).nullable(),
  stateVersion: count,
  createdAt: isoTime,
  canceledAt: isoTime.nullable(),
  /** Paid for an account the seller never took; the seller owes it back. */
  refundOwedUsd: usd,
  /** Paid into the escrow for it and held there until the seller has the account. */
  heldUsd: usd,
  /** Held payments returned to their payer on chain: the seller never took the account. */
  refunds: z.array(z.strictObject({ paymentId: id('apay_'), amountUsd: usd, transactionHash: z.string().nullable() })),
});
export type AccountView = z.infer<typeof accountViewSchema>;

/**
 * The payment behind a purchase: settled at once, or at a stateful seller held in the escrow until
 * the seller has the account (`holdTransactionHash`), then paid out (`settleTransactionHash`) or
 * returned to the payer (`refundTransactionHash`).
 */
export const purchasePaymentSchema = z.strictObject({
  id: id('apay_'),
  amountUsd: usd,
  status: z.string(),
  settleTransactionHash: z.string().nullable(),
  holdTransactionHash: z.string().nullable(),
  refundTransactionHash: z.string().nullable(),
});
export type PurchasePayment = z.infer<typeof purchasePaymentSchema>;

/** A key a stateful seller minted: relayed to the agent, never stored. */
export const mintedKeySchema = z.strictObject({
  accessId: someId,
  apiKey: z.string().min(1),
  maxKeys: z.number().int().optional(),
  /** As the seller wrote it. */
  keyExpiresAt: z.string().optional(),
});
export type MintedKey = z.infer<typeof mintedKeySchema>;

/** What a purchase's start or paid retry answers (built on the payment's shapes: see `purchaseOutcomeSchema` below). */
export type PurchaseOutcome = z.infer<typeof purchaseOutcomeSchema>;

// ─── Request records ────────────────────────────────────────────────────────────────────────────

export const requestRecordSchema = z.object({
  id: id('hubreq_'),
  sellerId: anyId,
  serviceId: anyId.nullish(),
  agentId: anyId.nullish(),
  buyerId: anyId.nullish(),
  method: z.string().max(16),
  path: z.string().max(MAX_RECORDED_PATH),
  sandbox: z.boolean(),
  lifecycle: z.enum(['forwarded', 'delivered', 'failed']),
  /** `free` when the agent sent `hub-mode: free` (the buyer's included units instead of a payment). */
  mode: z.enum(['paid', 'free']).optional(),
  upstreamStatus: z.number().int().min(100).max(599).nullish(),
  createdAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullish(),
});
export type RequestRecordInput = z.infer<typeof requestRecordSchema>;

export const requestCompletionSchema = z.object({
  id: id('hubreq_'),
  lifecycle: z.enum(['delivered', 'failed']),
  upstreamStatus: z.number().int().min(100).max(599).nullish(),
  completedAt: z.iso.datetime(),
});
export type RequestCompletion = z.infer<typeof requestCompletionSchema>;

/** Anonymous calls counted per seller and UTC minute (see the RequestTally model). */
export const requestTallySchema = z.object({
  sellerId: anyId,
  minute: z.iso.datetime(),
  sandbox: z.boolean(),
  lifecycle: z.enum(['delivered', 'failed']),
  count: z.number().int().min(1).max(1_000_000_000),
});
export type RequestTallyInput = z.infer<typeof requestTallySchema>;

export const requestBatchSchema = z.object({
  created: z.array(requestRecordSchema).max(MAX_RECORDS_PER_BATCH),
  completed: z.array(requestCompletionSchema).max(MAX_RECORDS_PER_BATCH),
  tallies: z.array(requestTallySchema).max(MAX_TALLIES_PER_BATCH).default([]),
});
export type RequestBatch = z.infer<typeof requestBatchSchema>;

// ─── Usage ──────────────────────────────────────────────────────────────────────────────────────

/**
 * Usage the proxy captured from a delivered response's `hub-usage` header. A capture the
 * control-plane refuses throws: a usage denial's code, or another code for a capture that
 * contradicts an earlier one of the same request (the proxy then says `settlement_failed`).
 */
export const capturedUsageSchema = z.object({
  requestId: id('hubreq_'),
  sellerId: anyId,
  organizationId: anyId,
  usage: z
    .array(z.object({ serviceSlug: z.string().max(MAX_SLUG_LENGTH), meterSlug: z.string().max(MAX_SLUG_LENGTH), quantity }))
    .max(MAX_USAGE_ITEMS),
});
export type CapturedUsage = z.infer<typeof capturedUsageSchema>;

// ─── Payments ───────────────────────────────────────────────────────────────────────────────────

/**
 * The request a payment is bound to: a paid retry must repeat it byte for byte, at the seller
 * (the pay URL) that challenged it.
 */
const boundRequest = {
  sellerId: anyId,
  method: z.string().max(16),
  pathAndQuery: z.string().max(MAX_PAYMENT_TARGET),
  bodyDigest: sha256Hex,
};

/** A seller's 402 (spec: Bodies the seller's API returns), to be priced into a challenge. */
export const challengeInputSchema = z.object({
  requestId: id('hubreq_'),
  agentId: anyId.nullable(),
  buyerId: anyId.nullable(),
  ...boundRequest,
  serviceSlug: slug,
  planSlug: z.string().max(MAX_SLUG_LENGTH).optional(),
  usage: z.array(z.object({ meterSlug: slug, quantity: quantity.optional(), maxQuantity: quantity.optional() })).max(MAX_USAGE_ITEMS),
  sandbox: z.boolean(),
  /** An identified agent's call is paid from its wallet's credit when that covers it; false asks for a payment. */
  useCredit: z.boolean().optional(),
});
export type ChallengeInput = z.infer<typeof challengeInputSchema>;

/** The reason a priced call's 402 gives an identified agent, and the account it can extend. */
export const planStandingSchema = z.strictObject({
  reason: z.enum(['usage_exhausted', 'access_not_found']),
  accessId: someId.nullable(),
  sells: z.boolean(),
});
export type PlanStanding = z.infer<typeof planStandingSchema>;

/** A priced challenge as the control-plane issued it. */
export const issuedChallengeSchema = z.strictObject({
  paymentId: id('apay_'),
  amountMicros: micros,
  amountUsd: usd,
  payTo: z.string().min(1),
  token: z.strictObject({ address: z.string().min(1), decimals: count, name: z.string(), version: z.string() }),
  serviceSlug: z.string().min(1),
  usage: z.array(z.strictObject({ meterSlug: z.string().min(1), quantity: count })),
  plan: z.strictObject({ id: someId, slug: z.string().min(1), billingMode: z.string() }).nullable(),
  rail: z.string().min(1),
  network: paymentRequirementsSchema.shape.network,
  requirements: paymentRequirementsSchema,
  /** The same payment as an x402 batch-settlement session, offered beside `requirements` when the seller takes sessions. */
  sessionRequirements: paymentRequirementsSchema.optional(),
  expiresAt: isoTime,
  /** Why an identified agent's plan did not cover the call; absent for anonymous callers. */
  standing: planStandingSchema.optional(),
  /**
   * The same price by card, when the seller takes cards and it is at least the provider's minimum
   * (docs/decisions.md#D-245): MPP's `stripe` method, for the seller's connected account.
   */
  card: z.strictObject({ amountCents: z.number().int().min(50).max(Number.MAX_SAFE_INTEGER), networkId: z.string().min(1) }).optional(),
});
export type IssuedChallenge = z.infer<typeof issuedChallengeSchema>;

/**
 * An admitted paid retry: forwarded under the challenged request's id, for the paying agent. A
 * session's cooperative refund is done by the claim itself: `refund` is its receipt (x402's
 * `payment-response`), answered to the agent with nothing forwarded (docs/decisions.md#D-308).
 */
export const claimedPaymentSchema = z.strictObject({
  requestId: id('hubreq_'),
  agentId: someId,
  buyerId: someId.nullable(),
  payer: wallet,
  kind: z.string().min(1),
  refund: settleResponseSchema.optional(),
});
export type ClaimedPayment = z.infer<typeof claimedPaymentSchema>;

export const paidFromCreditSchema = z.strictObject({
  kind: z.literal('paid_from_credit'),
  paymentId: id('apay_'),
  amountUsd: usd,
  claimed: claimedPaymentSchema,
});
export type PaidFromCredit = z.infer<typeof paidFromCreditSchema>;

/**
 * What a seller's 402 becomes, each way as an answer rather than an error: a priced challenge to
 * show the agent; a call the agent's credit with the seller paid in full (no challenge: forward it
 * again under `paymentId`, `claimed` as a verified payment's claim would be); or, when no
 * pay-as-you-go plan prices the call but one on sale does, the plan to buy or the account to extend.
 */
export const challengeOutcomeSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('challenge'), challenge: issuedChallengeSchema }),
  paidFromCreditSchema,
  z.strictObject({ kind: z.literal('plan_to_buy'), reason: planStandingSchema.shape.reason, accessId: someId.nullable() }),
]);
export type ChallengeOutcome = z.infer<typeof challengeOutcomeSchema>;

export const protocolSchema = z.enum(['x402', 'mpp']);
export type PaymentProtocol = z.infer<typeof protocolSchema>;

/** A paid retry: the request it repeats and the payment it carries. */
export const claimInputSchema = z.object({
  paymentId: id('apay_'),
  ...boundRequest,
  protocol: protocolSchema,
  payload: paymentPayloadSchema,
});
export type ClaimInput = z.infer<typeof claimInputSchema>;

/** A purchase's paid retry by card: the request it repeats and the shared payment token it carries. */
export const cardPurchaseInputSchema = z.object({
  paymentId: id('apay_'),
  ...boundRequest,
  spt: z.string().min(5).max(255),
  amountUsd: z.string().max(40).optional(),
});
export type CardPurchaseInput = z.infer<typeof cardPurchaseInputSchema>;

export const settleInputSchema = z.object({
  paymentId: id('apay_'),
  upstreamStatus: z.number().int().min(100).max(599),
  /**
   * Usage the proxy captured from the delivered response's `hub-usage`, recorded as `captureUsage`
   * records it just before settling (which reads it): one round trip for both.
   */
  usage: capturedUsageSchema.optional(),
});
export type SettleInput = z.infer<typeof settleInputSchema>;

export const adjustmentSchema = z.strictObject({ meterSlug: z.string().min(1), reportedQuantity: count, settledQuantity: count });
export type Adjustment = z.infer<typeof adjustmentSchema>;

/** The `hub-billing` header (spec: Response to the agent). */
export const billingSummarySchema = z.strictObject({
  status: z.enum(['settled', 'settling']),
  authorizedUsd: usd,
  chargedUsd: usd,
  remainderUsd: usd,
  /** Never null: docs/decisions.md › Payments says which value each outcome reads. */
  remainderHandling: z.enum(['credited', 'escrow_returned', 'escrow_expired']),
  /** Only on a call paid from the payer's credit with the seller, which no transaction moved. */
  paidFrom: z.literal('credit').optional(),
  settleTransactionHash: z.string().nullable(),
});
export type BillingSummary = z.infer<typeof billingSummarySchema>;

const released = z.strictObject({ kind: z.literal('released') });
const identity = z.strictObject({ kind: z.literal('identity') });
const billed = z.strictObject({
  kind: z.literal('billed'),
  billing: billingSummarySchema,
  adjusted: z.array(adjustmentSchema),
  /** Null when no payment moved (a charge of zero): nothing to claim success for. */
  receipt: settleResponseSchema.nullable(),
});
const failed = z.strictObject({ kind: z.literal('failed'), settlementReason: z.string().min(1), adjusted: z.array(adjustmentSchema) });

/** How a paid request ended; `failed` is an answer, not an error (the response is already on its way). */
export const settleOutcomeSchema = z.discriminatedUnion('kind', [released, identity, billed, failed]);
export type SettleOutcome = z.infer<typeof settleOutcomeSchema>;

const usageError = { usageError: z.string().min(1).optional() };
/** A settled request and, when the usage captured with it was refused, its `hub-usage-error`. */
export const settledRequestSchema = z.discriminatedUnion('kind', [
  released.extend(usageError),
  identity.extend(usageError),
  billed.extend(usageError),
  failed.extend(usageError),
]);
export type SettledRequest = z.infer<typeof settledRequestSchema>;

// ─── Storefront outcomes (built on the payment's shapes above) ──────────────────────────────────

export const purchaseOutcomeSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('challenge'), challenge: issuedChallengeSchema, requestId: id('hubreq_') }),
  z.strictObject({
    kind: z.literal('opened'),
    account: accountViewSchema,
    payment: purchasePaymentSchema.nullable(),
    settled: settleOutcomeSchema.nullable(),
    /** Paid by card: the provider's PaymentIntent, the MPP receipt's reference. */
    card: z.strictObject({ paymentIntentId: z.string().min(1) }).optional(),
  }),
  z.strictObject({ kind: z.literal('settling'), payment: purchasePaymentSchema }),
]);

// ─── Readiness ──────────────────────────────────────────────────────────────────────────────────

const paymentsAvailable = z.strictObject({ payments: z.literal('available') });
const paymentsUnavailable = z.strictObject({ payments: z.literal('unavailable'), reason: z.string().min(1) });
/** Whether a rail can take payments now, and why not. */
export const paymentsReadinessSchema = z.discriminatedUnion('payments', [paymentsAvailable, paymentsUnavailable]);
export type PaymentsReadiness = z.infer<typeof paymentsReadinessSchema>;

/**
 * What both processes' `/readyz` say beside `status`: the live rail's readiness (the one rail's),
 * and `testRail`'s when a test rail stands beside it.
 */
export type RailsReadiness = PaymentsReadiness & { testRail?: PaymentsReadiness };

const reachable = { ok: z.literal(true), database: z.boolean(), testRail: paymentsReadinessSchema.optional() };
const pingSchema = z.discriminatedUnion('payments', [paymentsAvailable.extend(reachable), paymentsUnavailable.extend(reachable)]);

// ─── The procedures ─────────────────────────────────────────────────────────────────────────────

type Procedure<Input extends z.ZodType, Output extends z.ZodType> = {
  kind: 'query' | 'mutation';
  input: Input;
  /** What the procedure answers (shared/contract-outputs.ts checks answers against it in tests). */
  output: Output;
  /**
   * Called on every paid request (or every identified one that reports usage): answered by the
   * control-plane's direct lane (control-plane/internal/direct-calls.ts) rather than tRPC's adapter.
   */
  hotPath?: true;
};
/** A procedure on every paid request's path. */
const onHotPath = <P extends Procedure<z.ZodType, z.ZodType>>(procedure: P): P => ({ ...procedure, hotPath: true });
const query = <Input extends z.ZodType, Output extends z.ZodType>(input: Input, output: Output): Procedure<Input, Output> => ({
  kind: 'query',
  input,
  output,
});
const mutation = <Input extends z.ZodType, Output extends z.ZodType>(input: Input, output: Output): Procedure<Input, Output> => ({
  kind: 'mutation',
  input,
  output,
});

export const contract = {
  ping: query(z.void(), pingSchema),
  sellerByHost: query(z.object({ host: z.string().min(1).max(300) }), paySellerSchema.nullable()),
  sellersChangedSince: query(
    z.object({ since: z.iso.datetime().nullable() }),
    z.strictObject({ now: isoTime, sellerIds: z.array(someId) }),
  ),
  manifest: query(z.object({ sellerId: anyId }), sellerManifestSchema.nullable()),
  discoveryCatalog: query(z.object({ sellerId: anyId }), discoveryCatalogSchema.nullable()),
  agentByTokenHash: query(z.object({ tokenHash: sha256Hex }), agentIdentitySchema.nullable()),
  agentChallenge: mutation(registrationChallengeInput, registrationChallengeSchema),
  agentRegister: mutation(registrationInput, registrationSchema),
  agentsChangedSince: query(z.object({ since: z.iso.datetime().nullable() }), z.strictObject({ now: isoTime, agentIds: z.array(someId) })),
  requestAgentClaim: mutation(claimRequestInput, claimRequestedSchema),
  viewClaim: query(claimLinkInput.extend({ link: z.enum(['confirm', 'release']) }), claimViewSchema),
  confirmClaim: mutation(claimLinkInput, claimViewSchema),
  releaseClaim: mutation(claimLinkInput, claimViewSchema),
  startPurchase: mutation(startPurchaseInput, purchaseOutcomeSchema),
  completePurchase: mutation(claimInputSchema.extend({ amountUsd: z.string().max(40).optional() }), purchaseOutcomeSchema),
  payPurchaseByCard: mutation(cardPurchaseInputSchema, purchaseOutcomeSchema),
  redeemKey: mutation(z.object({ sellerId: anyId, agentId: anyId, accessId: anyId.optional() }), mintedKeySchema),
  purchaseReceipt: query(
    z.object({ sellerId: anyId, agentId: anyId }),
    z.strictObject({ purchases: z.array(accountViewSchema), creditUsd: usd }),
  ),
  /** How many records the batch stored. */
  recordRequests: mutation(requestBatchSchema, count),
  captureUsage: onHotPath(mutation(capturedUsageSchema, z.strictObject({ usageEventIds: z.array(someId) }))),
  issuePaymentChallenge: onHotPath(mutation(challengeInputSchema, challengeOutcomeSchema)),
  claimPaidRequest: onHotPath(mutation(claimInputSchema, claimedPaymentSchema)),
  settlePaidRequest: onHotPath(mutation(settleInputSchema, settledRequestSchema)),
};

export type Contract = typeof contract;

/** The procedures `onHotPath` marks. */
export const HOT_PATH_PROCEDURES: readonly ProcedureName[] = (Object.keys(contract) as ProcedureName[]).filter(
  (name) => (contract[name] as { hotPath?: true }).hotPath,
);
export type ProcedureName = keyof Contract;
export type ProcedureInput<Name extends ProcedureName> = z.input<Contract[Name]['input']>;
export type ParsedInput<Name extends ProcedureName> = z.output<Contract[Name]['input']>;
export type ProcedureOutput<Name extends ProcedureName> = z.output<Contract[Name]['output']>;
