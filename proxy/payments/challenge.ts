import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { decodeContent } from '../../runtime/content-encoding.js';
import { readUpTo } from '../../runtime/read-body.js';
import { sendJson } from '../../runtime/respond.js';
import { inSpan } from '../../runtime/tracing.js';
import type { ChallengeOutcome, IssuedChallenge, PaidFromCredit } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { encodeHeaderJson, X402_HEADERS, X402_VERSION } from '../../shared/payments/x402-headers.js';
import { challengeAttributes, traceAttributes } from '../../shared/trace-attributes.js';
import { isUsageQuantity, isUsageSlug, MAX_USAGE_ITEMS } from '../../shared/usage.js';
import { originUrl } from '../arrival/public-origin.js';
import type { ProxyServices } from '../context.js';
import { type CallDiscovery, callDiscovery } from '../discovery/call-discovery.js';
import type { Identity } from '../paid-call/headers.js';
import type { PayRequest } from '../paid-call/pay-request.js';
import { upstreamFailure } from '../paid-call/upstream.js';
import { planLinks } from '../storefront/links.js';
import { mppChallenge } from './mpp.js';

/**
 * The `payment-required` header is kept under this many characters: Node's fetch refuses a response
 * whose headers pass 16 KB, and an x402 client echoes the document's extensions into its payment header.
 */
const MAX_REQUIRED_HEADER_CHARS = 8_192;

/** A seller's 402 body is read whole (it is priced, never shown); bigger than this is not one. */
const MAX_SELLER_402_BYTES = 65_536;

/**
 * Answers a seller's 402 with a priced challenge: the control-plane prices the usage the seller
 * named and records a payment attempt bound to the request; the agent gets the challenge in both
 * protocols. The paid retry comes back through `Payment.claim`. When `useCredit` and an identified
 * agent's credit with the seller pays the call instead, nothing is sent: the payment is returned
 * for the caller to forward the request again under it.
 */
export async function answerWithChallenge(
  services: ProxyServices,
  request: PayRequest,
  identity: Identity,
  seller: { body: Readable; headers: IncomingHttpHeaders },
  res: ServerResponse,
  useCredit: boolean,
): Promise<PaidFromCredit | undefined> {
  // A body cut off or stalled is the seller's failure, as on any forwarded call.
  const read = await readUpTo(seller.body, MAX_SELLER_402_BYTES).catch((err: unknown) => {
    throw upstreamFailure(err).error;
  });
  // The agent's Accept-Encoding went to the seller, so its 402 may come compressed.
  const decoded = read.complete ? decodeContent(read.bytes, seller.headers['content-encoding'], MAX_SELLER_402_BYTES) : undefined;
  const asked = decoded?.ok ? parseSellerPaymentRequired(decoded.bytes) : undefined;
  if (!asked) throw new ApiError('upstream_error', 'The seller answered 402 without a payment_required body hub can price.');
  // Read beside the pricing: a cached catalog costs nothing, a cold one no extra round trip in line.
  const discovery = callDiscovery(services, request.seller.id, request.method, request.target).catch(() => undefined);
  const outcome = await inSpan(
    services.tracing,
    'payment.challenge',
    async (span) => {
      const outcome = await askForChallenge(services, request, identity, asked, useCredit);
      span?.setAttributes(challengeAttributes(outcome));
      return outcome;
    },
    { attributes: traceAttributes({ sellerId: request.seller.id, requestId: identity.requestId }) },
  );
  if (outcome.kind === 'paid_from_credit') return outcome;
  // No per-call price, but a plan to buy or extend: the 402 says where.
  if (outcome.kind === 'plan_to_buy') throw new ApiError('payment_required', outcome.reason, planLinks(request.origin, outcome.accessId));
  const { body, headers } = challengeResponse(request, outcome.challenge, identity, services.mppSecret, await discovery);
  sendJson(res, 402, body, headers);
  return undefined;
}

/** The control-plane's pricing of a seller's 402: a challenge, a call paid from credit, or a plan to buy. */
function askForChallenge(
  services: ProxyServices,
  request: PayRequest,
  identity: Identity,
  asked: SellerPaymentRequired,
  useCredit: boolean,
): Promise<ChallengeOutcome> {
  return services.controlPlane.call('issuePaymentChallenge', {
    sellerId: request.seller.id,
    requestId: identity.requestId,
    agentId: identity.agentId ?? null,
    buyerId: identity.buyerId ?? null,
    method: request.method,
    pathAndQuery: request.target,
    bodyDigest: request.bodyDigest,
    serviceSlug: asked.serviceSlug,
    usage: asked.usage,
    ...(asked.planSlug ? { planSlug: asked.planSlug } : {}),
    sandbox: request.seller.sandbox,
    useCredit,
  });
}

/** Fields of a seller's 402 the proxy acts on (spec: Bodies the seller's API returns). */
export type SellerPaymentRequired = {
  serviceSlug: string;
  /** An item without `quantity` is priced at its ceiling: `maxQuantity`, else the price's default. */
  usage: { meterSlug: string; quantity?: number; maxQuantity?: number }[];
  planSlug?: string;
};

/** Parses a seller's 402 body; undefined when it is not the spec's `payment_required` shape. */
export function parseSellerPaymentRequired(body: Buffer): SellerPaymentRequired | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const v = value as Record<string, unknown>;
  if (v?.error !== 'payment_required' || !isUsageSlug(v.serviceSlug) || !Array.isArray(v.usage) || v.usage.length > MAX_USAGE_ITEMS)
    return undefined;
  const { planSlug } = v;
  if (planSlug !== undefined && !isUsageSlug(planSlug)) return undefined;
  const usage: SellerPaymentRequired['usage'] = [];
  for (const item of v.usage as unknown[]) {
    const i = item as Record<string, unknown>;
    if (!i || !isUsageSlug(i.meterSlug)) return undefined;
    const parsed: SellerPaymentRequired['usage'][number] = { meterSlug: i.meterSlug };
    for (const field of ['quantity', 'maxQuantity'] as const) {
      if (i[field] === undefined) continue;
      if (!isUsageQuantity(i[field])) return undefined;
      parsed[field] = i[field] as number;
    }
    usage.push(parsed);
  }
  return { serviceSlug: v.serviceSlug as string, usage, ...(isUsageSlug(planSlug) ? { planSlug } : {}) };
}

/**
 * The agent-facing 402 (spec: Priced challenge body shape): the priced body, with the x402
 * document's fields at its top level, and the same challenge in `payment-required` (x402) and
 * `www-authenticate` (MPP). `rail` and `network` are left out of `payment` on anonymous challenges.
 */
export function challengeResponse(
  { req, body, bodyDigest, origin, target }: Pick<PayRequest, 'req' | 'body' | 'origin' | 'target'> & { bodyDigest?: string },
  challenge: IssuedChallenge,
  ids: { requestId: string; agentId?: string | undefined },
  mppSecret: string,
  discovery?: CallDiscovery,
) {
  const mpp = mppChallenge(req, challenge, body, mppSecret, bodyDigest);
  const resource = {
    url: `${originUrl(origin)}${target}`,
    ...(discovery?.description ? { description: discovery.description } : {}),
    mimeType: 'application/json',
  };
  // A declared route's 402 carries x402's Bazaar discovery extension (docs/decisions.md#D-219).
  const extensions = discovery ? { extensions: discovery.extensions } : {};
  // A seller taking sessions is offered both ways for the same price, exact first (docs/decisions.md#D-281).
  const accepts = challenge.sessionRequirements ? [challenge.requirements, challenge.sessionRequirements] : [challenge.requirements];
  const x402Document = { x402Version: X402_VERSION, error: 'payment_required', resource, accepts };
  // An identified agent at a storefront that sells plans learns why its plan did not cover the call.
  const standing = challenge.standing?.sells ? challenge.standing : undefined;
  const payload = {
    error: 'payment_required',
    reason: standing?.reason ?? 'absent',
    ...(standing ? planLinks(origin, standing.accessId) : {}),
    ...(ids.agentId ? { zcAgentId: ids.agentId } : {}),
    zcRequestId: ids.requestId,
    serviceSlug: challenge.serviceSlug,
    usage: challenge.usage,
    plan: challenge.plan,
    payment: {
      id: challenge.paymentId,
      amountUsd: challenge.amountUsd,
      ...(ids.agentId ? { rail: challenge.rail, network: challenge.network } : {}),
    },
    protocols: {
      x402: {
        x402Version: X402_VERSION,
        network: challenge.requirements.network,
        scheme: challenge.requirements.scheme,
        amount: challenge.requirements.amount,
        asset: challenge.requirements.asset,
      },
      mpp: { challengeId: mpp.challengeId, method: 'evm', intent: 'charge' },
    },
    x402Version: X402_VERSION,
    resource,
    accepts,
    ...extensions,
  };
  return {
    body: payload,
    headers: {
      [X402_HEADERS.required]: requiredHeader(x402Document, discovery),
      'www-authenticate': mpp.header,
      'cache-control': 'no-store',
    },
  };
}

/**
 * The x402 document as `payment-required`: with the full Bazaar extension when the header stays
 * small, else without the route's example, else without extensions (the body always has them all).
 */
function requiredHeader(x402Document: Record<string, unknown>, discovery: CallDiscovery | undefined): string {
  const header = (extensions?: Record<string, unknown>) => encodeHeaderJson(extensions ? { ...x402Document, extensions } : x402Document);
  for (const extensions of [discovery?.extensions, discovery?.briefExtensions]) {
    const encoded = extensions && header(extensions);
    if (encoded && encoded.length <= MAX_REQUIRED_HEADER_CHARS) return encoded;
  }
  return header();
}
