import type { IncomingMessage } from 'node:http';
import { EMPTY_BODY, hasNoBody, readBody } from '../../runtime/read-body.js';
import type { RequestView } from '../../runtime/request-view.js';
import type { PaySeller } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { HUB_HEADERS } from '../../shared/hub-headers.js';
import { sha256Hex } from '../../shared/signature.js';
import { authRecipe } from '../agents/agent-auth.js';
import { ANONYMOUS, agentToken, type Caller } from '../agents/agent-directory.js';
import { carriesLoopMark, LOOP_FIELD } from '../arrival/loop-mark.js';
import { type PublicOrigin, publicOrigin } from '../arrival/public-origin.js';
import type { ProxyServices } from '../context.js';
import { isSealedRequest, openSealedRequest, type SealedRequest } from '../encryption/sealed-request.js';
import { type PaymentProof, readPaymentProof, usableProof } from '../payments/proof.js';

const EMPTY_BODY_SHA256 = sha256Hex(EMPTY_BODY);

/**
 * A request for the seller's API, read once: the request line as the agent sent it (the signature
 * and a payment bind to these exact bytes), the body and its digest, who calls, in which mode,
 * and the payment it carries. Everything after this reads the facts from here.
 */
export type PayRequest = {
  req: RequestView;
  seller: PaySeller;
  /** As Node parsed it: upper case. */
  method: string;
  /** The raw request target, path and query, unnormalized. */
  target: string;
  body: Buffer;
  /** SHA-256 of `body`, lowercase hex. */
  bodyDigest: string;
  /**
   * An end-to-end encrypted request (`Content-Type: application/jose`), opened: the seller gets
   * its plaintext. `body` stays the JWE the agent sent, which is what a payment binds to.
   */
  sealed: SealedRequest | undefined;
  caller: Caller;
  /** `hub-mode: free` asks for the buyer's included units; any other value, or none, is paid mode. */
  mode: 'paid' | 'free';
  proof: Extract<PaymentProof, { kind: 'none' | 'paid' }>;
  /** The Authorization header is hub's (an agent token or a payment) and never reaches the seller. */
  dropAuthorization: boolean;
  /** How the agent reached the pay URL (behind a trusted reverse proxy, what it reports). */
  origin: PublicOrigin;
};

/** Reads a request's facts, refusing what can be refused before its body is read. */
export function readPayRequest(services: ProxyServices, req: IncomingMessage, seller: PaySeller): Promise<PayRequest> {
  return payRequestOf(services, req, seller, () => readBody(req, services.config.proxy.maxBodyBytes));
}

/** `readPayRequest` of a request seen without its socket: `body` reads the body when it is wanted. */
export async function payRequestOf(
  services: ProxyServices,
  req: RequestView,
  seller: PaySeller,
  body: () => Promise<Buffer>,
): Promise<PayRequest> {
  // Forwarded by this hub already and come back: answered before any work, so a loop ends here.
  if (carriesLoopMark(req.headers[LOOP_FIELD], services.pools.loopMark)) throw new ApiError('loop_detected');
  const origin = publicOrigin(req, services.config.proxy.trustProxy);
  const authorization = req.headers.authorization;
  const carriesAgentToken = agentToken(authorization) !== undefined;
  const caller = carriesAgentToken ? await services.agents.identify(authorization, seller.id) : ANONYMOUS;
  if (caller.kind === 'unknown_token') {
    throw new ApiError('bearer_required', 'The agent token is unknown or was replaced.', { auth: authRecipe(origin) });
  }
  if (!seller.signingSecrets.length) throw new ApiError('signing_secret_required');
  const mode =
    String(req.headers[HUB_HEADERS.mode] ?? '')
      .trim()
      .toLowerCase() === 'free'
      ? 'free'
      : 'paid';
  // Free mode is served only to an agent a human has claimed with a verified email; any other is
  // told how to get there before anything is forwarded.
  if (mode === 'free' && !(caller.kind === 'agent' && caller.claimed && caller.buyerId && caller.emailVerified)) {
    throw new ApiError(
      'bearer_required',
      caller.kind === 'agent'
        ? 'Free mode needs this agent to be claimed by a human with a verified email: see auth.claim.'
        : 'Free mode needs a registered agent credential, claimed by a buyer with a verified email.',
      { auth: authRecipe(origin) },
    );
  }
  const presented = readPaymentProof(req, services.mppSecret);

  const bytes = hasNoBody(req) ? EMPTY_BODY : await body();
  // Refused, when it must be, before any payment is asked (spec: the seven JWE codes), so before a
  // stale payment proof is answered with a new challenge too.
  const sealed = isSealedRequest(req) ? await openSealedRequest(services.jwe, seller, bytes, services.metrics.inProgress - 1) : undefined;
  const proof = usableProof(presented);
  // A card pays for plans and top-ups only (docs/decisions.md#D-245): no call's challenge offers one.
  if (proof.kind === 'card') throw new ApiError('payment_request_mismatch', 'A card pays for plan purchases and top-ups at /extend only.');
  return {
    req,
    seller,
    method: req.method ?? 'GET',
    target: req.url ?? '/',
    body: bytes,
    bodyDigest: bytes.length ? sha256Hex(bytes) : EMPTY_BODY_SHA256,
    sealed,
    caller,
    mode,
    proof,
    dropAuthorization: carriesAgentToken || (proof.kind === 'paid' && proof.carriedInAuthorization),
    origin,
  };
}
