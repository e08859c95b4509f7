import { z } from 'zod';
import type { Jwks } from './encryption/suite.js';
import { type PaymentRequirements, paymentPayloadSchema, type SettleResponse } from './payments/x402-wire.js';
import { MAX_SLUG_LENGTH, MAX_USAGE_ITEMS, MAX_USAGE_QUANTITY } from './usage.js';

/**
 * The contract between the proxy and the control-plane: every procedure the proxy calls, its input
 * schema (the control-plane validates it), the type of its answer, and the limits both sides keep.
 * Nothing else crosses between the two processes. A procedure that fails throws hub's `ApiError`;
 * it reaches the proxy as the spec's envelope and the proxy's client turns it back into an
 * `ApiError` (proxy/control-plane-client.ts), so a refusal needs no conversion on the way.
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

// ─── Catalog ────────────────────────────────────────────────────────────────────────────────────

/** What the proxy needs to serve a seller's pay URL, signing secrets included (newest first). */
export type PaySeller = {
  id: string;
  organizationId: string;
  slug: string;
  name: string;
  upstreamBaseUrl: string;
  sandbox: boolean;
  hostnames: string[];
  signingSecrets: { kid: string; secret: string }[];
  /** Active encryption keys, newest first, with the private scalar `d` opened (the proxy decrypts). */
  encryptionKeys: { kid: string; x: string; y: string; d: string }[];
  updatedAt: string;
};

/** `GET /manifest.json` on the pay URL. */
export type SellerManifest = {
  seller: { id: string; slug: string; name: string };
  plans: {
    id: string;
    slug: string;
    name: string;
    serviceSlug: string;
    /** `standard`, or `free_trial` (opens without payment, once per buyer). */
    kind: string;
    billingMode: string;
    interval: string | null;
    purchasable: boolean;
    basePriceUsd: string;
    includedCreditUsd: string;
    /** Included credit counted in the seller's own units, with their label (`0`/null when none). */
    includedCreditUnits: number;
    includedCreditUnitLabel: string | null;
    minimumPurchaseUsd: string;
    /** Who may open it without paying: `off`, `required` (a claimed agent with a verified email), `requested`. */
    verifiedEmailPolicy: string;
    /** How many accounts of this plan a seller grants in all, when bounded. */
    maxClaims: number | null;
    prices: {
      meterSlug: string;
      unit: string;
      priceUsd: string;
      unitSize: number;
      includedUnits: number;
      defaultMaxQuantity: number | null;
    }[];
  }[];
  /** How to encrypt a request to this seller end to end; null while it publishes no key. */
  encryption: ManifestEncryption | null;
};

export type ManifestEncryption = {
  alg: 'ECDH-ES';
  enc: 'A256GCM';
  /** The protected-header parameter that carries the agent's public reply JWK. */
  replyJwkParameter: string;
  /** Also served, without credentials, at this path of the pay URL. */
  jwksPath: string;
  jwks: Jwks;
};

// ─── Agents ─────────────────────────────────────────────────────────────────────────────────────

/** `emailVerified`: the owning buyer's email is verified (free mode needs it). */
export type AgentIdentity = { agentId: string; buyerId: string | null; claimed: boolean; emailVerified: boolean };

export const registrationChallengeInput = z.object({ walletAddress: z.string().max(100), sellerSlug: z.string().max(100) });
export type RegistrationChallenge = { challengeId: string; message: string; expiresAt: string };

export const registrationInput = z.object({ challengeId: z.string().max(64), signature: z.string().max(200) });
export type Registration = { agentId: string; buyerId: string | null; walletAddress: string; token: string };

// ─── Agent claims ───────────────────────────────────────────────────────────────────────────────

export const claimRequestInput = z.object({
  agentId: anyId,
  sellerId: anyId,
  /** Already validated and lowercased by the proxy. */
  email: z.string().max(254),
  /** Scheme and host of the pay URL the agent asked on: the mailed links point there. */
  payOrigin: z.string().max(300),
});
export type ClaimRequested = { status: 'pending' | 'claimed'; email: string; expiresAt: string | null };

/** A claim as its links show it to the human who opens them. */
export type ClaimView = {
  state: 'open' | 'confirmed' | 'released' | 'expired' | 'used' | 'unknown' | 'taken';
  agentId?: string;
  walletAddress?: string;
  email?: string;
  sellerName?: string | null;
  payOrigin?: string;
};
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

/** An account (`hubacc_`) as its holder and its seller see it. */
export type AccountView = {
  accessId: string;
  /** active | canceled | suspended */
  status: string;
  /** pending | provisioning | active | failed: whether the seller has the account (stateful sellers) */
  provisioningState: string;
  /** The newest account write's delivery; null for sellers that take none. */
  deliveryStatus: string | null;
  agentId: string;
  buyerId: string | null;
  plan: { id: string; slug: string; name: string; billingMode: string; interval: string };
  period: { start: string | null; end: string | null };
  creditGrantedUsd: string | null;
  creditReversedUsd: string;
  balanceUsd: string | null;
  includedUnits: { meterSlug: string; includedUnits: number; usedUnits: number }[];
  stateVersion: number;
  createdAt: string;
  canceledAt: string | null;
  /** Paid for an account the seller never took; the seller owes it back. */
  refundOwedUsd: string;
};

/** The payment behind a purchase: settled at once, or reserved until a stateful seller has the account. */
export type PurchasePayment = { id: string; amountUsd: string; status: string; settleTransactionHash: string | null };

/** A key a stateful seller minted: relayed to the agent, never stored. */
export type MintedKey = { accessId: string; apiKey: string; maxKeys?: number; keyExpiresAt?: string };

export type PurchaseOutcome =
  | { kind: 'challenge'; challenge: IssuedChallenge; requestId: string }
  | { kind: 'opened'; account: AccountView; payment: PurchasePayment | null; settled: SettleOutcome | null }
  | { kind: 'settling'; payment: PurchasePayment };

// ─── Request records ────────────────────────────────────────────────────────────────────────────
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

/** The request a payment is bound to: a paid retry must repeat it byte for byte. */
const boundRequest = {
  method: z.string().max(16),
  pathAndQuery: z.string().max(MAX_PAYMENT_TARGET),
  bodyDigest: sha256Hex,
};

/** A seller's 402 (spec: Bodies the seller's API returns), to be priced into a challenge. */
export const challengeInputSchema = z.object({
  sellerId: anyId,
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

/**
 * What a seller's 402 becomes, each way as an answer rather than an error: a priced challenge to
 * show the agent; a call the agent's credit with the seller paid in full (no challenge: forward it
 * again under `paymentId`, `claimed` as a verified payment's claim would be); or, when no
 * pay-as-you-go plan prices the call but one on sale does, the plan to buy or the account to extend.
 */
export type ChallengeOutcome =
  | { kind: 'challenge'; challenge: IssuedChallenge }
  | PaidFromCredit
  | { kind: 'plan_to_buy'; reason: PlanStanding['reason']; accessId: string | null };

export type PaidFromCredit = { kind: 'paid_from_credit'; paymentId: string; amountUsd: string; claimed: ClaimedPayment };

/** A priced challenge as the control-plane issued it. */
export type IssuedChallenge = {
  paymentId: string;
  amountMicros: string;
  amountUsd: string;
  payTo: string;
  token: { address: string; decimals: number; name: string; version: string };
  serviceSlug: string;
  usage: { meterSlug: string; quantity: number }[];
  plan: { id: string; slug: string; billingMode: string } | null;
  rail: string;
  network: `${string}:${string}`;
  requirements: PaymentRequirements;
  expiresAt: string;
  /** Why an identified agent's plan did not cover the call; absent for anonymous callers. */
  standing?: PlanStanding | undefined;
};

/** The reason a priced call's 402 gives an identified agent, and the account it can extend. */
export type PlanStanding = { reason: 'usage_exhausted' | 'access_not_found'; accessId: string | null; sells: boolean };

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

/** An admitted paid retry: forwarded under the challenged request's id, for the paying agent. */
export type ClaimedPayment = { requestId: string; agentId: string; buyerId: string | null; payer: string; kind: string };

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

export type Adjustment = { meterSlug: string; reportedQuantity: number; settledQuantity: number };

/** The `hub-billing` header (spec: Response to the agent). */
export type BillingSummary = {
  status: 'settled' | 'settling';
  authorizedUsd: string;
  chargedUsd: string;
  remainderUsd: string;
  /** Never null: docs/decisions.md › Payments says which value each outcome reads. */
  remainderHandling: 'credited' | 'escrow_returned' | 'escrow_expired';
  /** Only on a call paid from the payer's credit with the seller, which no transaction moved. */
  paidFrom?: 'credit';
  settleTransactionHash: string | null;
};

/** How a paid request ended; `failed` is an answer, not an error (the response is already on its way). */
export type SettleOutcome =
  | { kind: 'released' }
  | { kind: 'identity' }
  /** `receipt` is null when no payment moved (a charge of zero): nothing to claim success for. */
  | { kind: 'billed'; billing: BillingSummary; adjusted: Adjustment[]; receipt: SettleResponse | null }
  | { kind: 'failed'; settlementReason: string; adjusted: Adjustment[] };

/** A settled request and, when the usage captured with it was refused, its `hub-usage-error`. */
export type SettledRequest = SettleOutcome & { usageError?: string };

// ─── The procedures ─────────────────────────────────────────────────────────────────────────────

type Procedure<Input extends z.ZodType, Output> = {
  kind: 'query' | 'mutation';
  input: Input;
  /** Type only: what the procedure answers. */
  output?: Output;
  /**
   * Called on every paid request (or every identified one that reports usage): answered by the
   * control-plane's direct lane (control-plane/internal/direct-calls.ts) rather than tRPC's adapter.
   */
  hotPath?: true;
};
/** A procedure on every paid request's path. */
const onHotPath = <P extends Procedure<z.ZodType, unknown>>(procedure: P): P => ({ ...procedure, hotPath: true });
const query =
  <Output>() =>
  <Input extends z.ZodType>(input: Input): Procedure<Input, Output> => ({ kind: 'query', input });
const mutation =
  <Output>() =>
  <Input extends z.ZodType>(input: Input): Procedure<Input, Output> => ({ kind: 'mutation', input });

/** Whether hub can take payments now, and why not: what both processes' `/readyz` say beside `status`. */
export type PaymentsReadiness = { payments: 'available' } | { payments: 'unavailable'; reason: string };

export const contract = {
  ping: query<{ ok: true; database: boolean } & PaymentsReadiness>()(z.void()),
  sellerByHost: query<PaySeller | null>()(z.object({ host: z.string().min(1).max(300) })),
  sellersChangedSince: query<{ now: string; sellerIds: string[] }>()(z.object({ since: z.iso.datetime().nullable() })),
  manifest: query<SellerManifest | null>()(z.object({ sellerId: anyId })),
  agentByTokenHash: query<AgentIdentity | null>()(z.object({ tokenHash: sha256Hex })),
  agentChallenge: mutation<RegistrationChallenge>()(registrationChallengeInput),
  agentRegister: mutation<Registration>()(registrationInput),
  agentsChangedSince: query<{ now: string; agentIds: string[] }>()(z.object({ since: z.iso.datetime().nullable() })),
  requestAgentClaim: mutation<ClaimRequested>()(claimRequestInput),
  viewClaim: query<ClaimView>()(claimLinkInput.extend({ link: z.enum(['confirm', 'release']) })),
  confirmClaim: mutation<ClaimView>()(claimLinkInput),
  releaseClaim: mutation<ClaimView>()(claimLinkInput),
  startPurchase: mutation<PurchaseOutcome>()(startPurchaseInput),
  completePurchase: mutation<PurchaseOutcome>()(claimInputSchema.extend({ amountUsd: z.string().max(40).optional() })),
  redeemKey: mutation<MintedKey>()(z.object({ sellerId: anyId, agentId: anyId, accessId: anyId.optional() })),
  purchaseReceipt: query<{ purchases: AccountView[]; creditUsd: string }>()(z.object({ sellerId: anyId, agentId: anyId })),
  recordRequests: mutation<number>()(requestBatchSchema),
  captureUsage: onHotPath(mutation<{ usageEventIds: string[] }>()(capturedUsageSchema)),
  issuePaymentChallenge: onHotPath(mutation<ChallengeOutcome>()(challengeInputSchema)),
  claimPaidRequest: onHotPath(mutation<ClaimedPayment>()(claimInputSchema)),
  settlePaidRequest: onHotPath(mutation<SettledRequest>()(settleInputSchema)),
};

export type Contract = typeof contract;

/** The procedures `onHotPath` marks. */
export const HOT_PATH_PROCEDURES: readonly ProcedureName[] = (Object.keys(contract) as ProcedureName[]).filter(
  (name) => (contract[name] as { hotPath?: true }).hotPath,
);
export type ProcedureName = keyof Contract;
export type ProcedureInput<Name extends ProcedureName> = z.input<Contract[Name]['input']>;
export type ParsedInput<Name extends ProcedureName> = z.output<Contract[Name]['input']>;
export type ProcedureOutput<Name extends ProcedureName> = Exclude<Contract[Name]['output'], undefined>;
