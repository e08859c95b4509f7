import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { parseJsonBody } from '../../runtime/json-body.js';
import { readBody } from '../../runtime/read-body.js';
import { sendJson } from '../../runtime/respond.js';
import { activeSpan, inSpan, SpanKind } from '../../runtime/tracing.js';
import { AGENT_PATHS } from '../../shared/agent-paths.js';
import type { AccountView, PaySeller, PurchaseOutcome } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { PAYMENT_RECEIPT_HEADER, STRIPE_METHOD } from '../../shared/payments/mpp/index.js';
import { idSchema } from '../../shared/schemas/fields.js';
import { sha256Hex } from '../../shared/signature.js';
import { traceAttributes } from '../../shared/trace-attributes.js';
import { describeIssues } from '../../shared/validation-message.js';
import { authRecipe } from '../agents/agent-auth.js';
import type { AgentCaller } from '../agents/agent-directory.js';
import { originUrl, type PublicOrigin, publicOrigin } from '../arrival/public-origin.js';
import type { ProxyServices } from '../context.js';
import { isSealedRequest, openSealedRequest, type SealedRequest } from '../encryption/sealed-request.js';
import { sendSealedJson } from '../encryption/sealed-response.js';
import { challengeResponse } from '../payments/challenge.js';
import { mppReceipt } from '../payments/mpp.js';
import { billingHeaders } from '../payments/payment.js';
import { readPaymentProof, usableProof } from '../payments/proof.js';
import { accountLinks } from './links.js';

/**
 * The storefront's paths on the pay URL: hub's, never the seller's (they are not forwarded).
 *
 * * `POST /extend` buys a plan, or with `?accessId=` renews or tops up an account: 402 with the
 *   price in both protocols, then the paid retry opens or extends the account. Free plans open at
 *   once. The paid retry may come without the agent's token (an MPP client puts its credential in
 *   `Authorization`): the payment binds it to the challenge, which was issued to the agent.
 * * `GET /purchases/receipt` lists the accounts the agent, and the human who owns it, hold here.
 * * `POST /keys/redeem` has a stateful seller mint a key for an account (`?accessId=` or
 *   `{accessId}`; either may be left out when the agent holds one account here). The key is
 *   relayed with `cache-control: no-store` and kept nowhere.
 */
const STOREFRONT_PATHS = new Set<string>([AGENT_PATHS.extend, AGENT_PATHS.receipt, AGENT_PATHS.redeem]);

/** A purchase body is a plan id and an amount: anything near this size is not one. */
const MAX_PURCHASE_BODY_BYTES = 4_096;

const extendBody = z
  .object({
    planId: idSchema('plan').optional(),
    amountUsd: z.string().max(40, 'amountUsd is too long').optional(),
  })
  .strict();

const accessIdParam = idSchema('access');

export function isStorefrontPath(path: string): boolean {
  return STOREFRONT_PATHS.has(path);
}

/**
 * The storefront's paths at the pay URL. Traced, each request is a span of its own
 * (`storefront <path>`), and the control-plane's work for it (pricing, the claim, the account) its
 * children, across processes as for a paid call.
 */
export function handleStorefront(path: string, req: IncomingMessage, res: ServerResponse, seller: PaySeller, services: ProxyServices) {
  if (!services.tracing) return serveStorefront(path, req, res, seller, services);
  return inSpan(
    services.tracing,
    `storefront ${path}`,
    (span) =>
      serveStorefront(path, req, res, seller, services).finally(() => span?.setAttributes(traceAttributes({ httpStatus: res.statusCode }))),
    { kind: SpanKind.SERVER, attributes: traceAttributes({ sellerId: seller.id, method: req.method, route: path }) },
  );
}

async function serveStorefront(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  seller: PaySeller,
  services: ProxyServices,
): Promise<void> {
  const origin = publicOrigin(req, services.config.proxy.trustProxy);
  const method = path === AGENT_PATHS.receipt ? 'GET' : 'POST';
  const proof = path === AGENT_PATHS.extend ? readPaymentProof(req, services.mppSecret) : undefined;
  const caller = await services.agents.identify(req.headers.authorization, seller.id);
  if (caller.kind !== 'agent' && proof?.kind !== 'paid' && proof?.kind !== 'card') {
    throw new ApiError('bearer_required', 'The storefront is for registered agents.', { auth: authRecipe(origin) });
  }
  if (req.method !== method && !(method === 'GET' && req.method === 'HEAD'))
    throw new ApiError('method_not_allowed', `Use ${method} ${path}.`);

  if (path === AGENT_PATHS.receipt) {
    const agentId = (caller as AgentCaller).agentId;
    const { purchases, creditUsd } = await services.controlPlane.call('purchaseReceipt', { sellerId: seller.id, agentId });
    return sendJson(res, 200, { purchases: purchases.map((p) => withLinks(p, origin)), creditUsd }, { 'cache-control': 'no-store' });
  }
  if (path === AGENT_PATHS.redeem) return redeem(req, res, seller, services, (caller as AgentCaller).agentId);

  const target = req.url ?? '/';
  const body = await readStorefrontBody(req, seller, services);
  // A payment binds to the bytes as sent: an encrypted purchase's paid retry resends the same JWE.
  const bound = { method: req.method ?? 'POST', pathAndQuery: target, bodyDigest: sha256Hex(body.sent) };
  const payment = proof && usableProof(proof);
  const reply = replier(res, services, body.sealed);
  if (payment && payment.kind !== 'none') {
    // A retry's amount is compared with the paid one even when the body is otherwise off.
    const amountUsd = amountOf(body.plain, body.contentType);
    const retry = { paymentId: payment.paymentId, sellerId: seller.id, ...bound, ...(amountUsd === undefined ? {} : { amountUsd }) };
    activeSpan()?.setAttributes(
      traceAttributes({ paymentId: payment.paymentId, protocol: payment.kind === 'card' ? 'mpp' : payment.protocol }),
    );
    // By card (MPP's `stripe` charge), the control-plane charges the token; else it claims and settles the signed payment.
    const outcome =
      payment.kind === 'card'
        ? await services.controlPlane.call('payPurchaseByCard', { ...retry, spt: payment.spt })
        : await services.controlPlane.call('completePurchase', { ...retry, protocol: payment.protocol, payload: payment.payload });
    return answer(reply, outcome, origin, payment.kind === 'card' ? 'mpp' : payment.protocol);
  }

  const agent = caller as AgentCaller;
  const parsed = extendBody.safeParse(parseJsonBody(body.plain, body.contentType));
  if (!parsed.success) throw new ApiError('invalid_request', describeIssues(parsed.error.issues));
  const outcome = await services.controlPlane
    .call('startPurchase', {
      sellerId: seller.id,
      agentId: agent.agentId,
      ...definedOnly(parsed.data),
      ...definedOnly({ accessId: accessIdOf(target) }),
      ...bound,
    })
    .catch((err: unknown) => {
      // A free plan that asks for a verified email says how to get one.
      if (err instanceof ApiError && err.code === 'bearer_required')
        throw new ApiError('bearer_required', err.reason, { auth: authRecipe(origin) });
      throw err;
    });
  if (outcome.kind === 'challenge') {
    const ids = { requestId: outcome.requestId, agentId: agent.agentId };
    const { body: challenge, headers } = challengeResponse(
      { req, body: body.sent, origin, target },
      outcome.challenge,
      ids,
      services.mppSecret,
    );
    return sendJson(res, 402, challenge, headers);
  }
  return answer(reply, outcome, origin);
}

/**
 * A storefront body: the bytes as sent, and the JSON they carry, opened first when they are a
 * Compact JWE (`application/jose`: refused with the seven JWE codes before anything is bought).
 */
async function readStorefrontBody(
  req: IncomingMessage,
  seller: PaySeller,
  services: ProxyServices,
): Promise<{ sent: Buffer; plain: Buffer; contentType: string | undefined; sealed?: SealedRequest }> {
  const sent = await readBody(req, MAX_PURCHASE_BODY_BYTES);
  if (!isSealedRequest(req)) return { sent, plain: sent, contentType: req.headers['content-type'] };
  const sealed = await openSealedRequest(services.jwe, seller, sent, services.metrics.inProgress - 1);
  return { sent, plain: sealed.plaintext, contentType: sealed.contentType, sealed };
}

type Reply = (status: number, body: unknown, headers: Record<string, string>) => Promise<void>;

/** Sends a storefront answer: as JSON, or to an encrypted request encrypted to its reply key. */
function replier(res: ServerResponse, services: ProxyServices, sealed: SealedRequest | undefined): Reply {
  if (!sealed) return async (status, body, headers) => sendJson(res, status, body, headers);
  return (status, body, headers) => sendSealedJson(res, services.jwe, sealed, status, body, headers);
}

const redeemBody = z.object({ accessId: accessIdParam.optional() }).strict();

async function redeem(req: IncomingMessage, res: ServerResponse, seller: PaySeller, services: ProxyServices, agentId: string) {
  const body = await readStorefrontBody(req, seller, services);
  const parsed = redeemBody.safeParse(parseJsonBody(body.plain, body.contentType));
  if (!parsed.success) throw new ApiError('invalid_request', describeIssues(parsed.error.issues));
  const accessId = accessIdOf(req.url ?? '/') ?? parsed.data.accessId;
  const key = await services.controlPlane
    .call('redeemKey', { sellerId: seller.id, agentId, ...definedOnly({ accessId }) })
    .catch((err: unknown) => {
      // The hint (the seller's own, or hub's for a seller failing for now) goes out as Retry-After too.
      const hint = err instanceof ApiError ? err.extra.retryAfterSeconds : undefined;
      if (typeof hint === 'number') res.setHeader('retry-after', String(hint));
      throw err;
    });
  await replier(res, services, body.sealed)(200, key, { 'cache-control': 'no-store' });
}

/**
 * The answer to a purchase: 201 with the account opened or extended and the payment behind it
 * (with the billing headers of a settled one), or 202 while its settlement is still pending.
 */
function answer(reply: Reply, outcome: PurchaseOutcome, origin: PublicOrigin, protocol?: 'x402' | 'mpp'): Promise<void> {
  if (outcome.kind === 'challenge') throw new Error('a paid retry is never challenged again');
  if (outcome.kind === 'settling') {
    return reply(
      202,
      { status: 'settling', payment: outcome.payment, receiptUrl: `${originUrl(origin)}${AGENT_PATHS.receipt}` },
      { 'cache-control': 'no-store' },
    );
  }
  // Billing headers stay outside the encryption, as on a paid call.
  const headers = {
    'cache-control': 'no-store',
    ...(outcome.settled && protocol ? billingHeaders(outcome.settled, protocol) : {}),
    // Paid by card: MPP's receipt names the `stripe` method and the provider's PaymentIntent.
    ...(outcome.card ? { [PAYMENT_RECEIPT_HEADER]: mppReceipt(outcome.card.paymentIntentId, STRIPE_METHOD) } : {}),
  };
  return reply(
    201,
    { status: outcome.account.provisioningState, account: withLinks(outcome.account, origin), payment: outcome.payment },
    headers,
  );
}

function withLinks(account: AccountView, origin: PublicOrigin) {
  return { ...account, ...accountLinks(origin, account.accessId) };
}

/** `?accessId=` of the target; 400 when present but not an account id. */
function accessIdOf(target: string): string | undefined {
  const query = target.indexOf('?');
  if (query < 0) return undefined;
  const values = new URLSearchParams(target.slice(query + 1)).getAll('accessId');
  if (values.length === 0) return undefined;
  const parsed = accessIdParam.safeParse(values.length === 1 ? values[0] : '');
  if (!parsed.success) throw new ApiError('invalid_request', 'accessId must be one account id (hubacc_…).');
  return parsed.data;
}

/** The `amountUsd` a body names, if it is a JSON object that names one; never throws. */
function amountOf(body: Buffer, contentType: string | undefined): string | undefined {
  try {
    const amount = parseJsonBody(body, contentType).amountUsd;
    return typeof amount === 'string' && amount.length <= 40 ? amount : undefined;
  } catch {
    return undefined;
  }
}

function definedOnly<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
