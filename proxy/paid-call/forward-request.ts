import type { IncomingMessage, ServerResponse } from 'node:http';
import { tagRequest } from '../../runtime/containment.js';
import { inSpan, SpanKind } from '../../runtime/tracing.js';
import { MAX_RECORDED_PATH, type RequestRecordInput } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { HUB_HEADERS } from '../../shared/hub-headers.js';
import { newRequestId } from '../../shared/ids.js';
import { encodeHeaderJson, X402_HEADERS } from '../../shared/payments/x402-headers.js';
import { traceAttributes } from '../../shared/trace-attributes.js';
import type { ProxyServices } from '../context.js';
import { type PlainResponse, replyAgreement, sealResponse } from '../encryption/sealed-response.js';
import { answerWithChallenge } from '../payments/challenge.js';
import { Payment } from '../payments/payment.js';
import type { PaySeller } from '../seller-catalog.js';
import { ClientGone } from './client-gone.js';
import { deliver } from './deliver.js';
import { agentResponseHeaders, type Identity } from './headers.js';
import { type PayRequest, readPayRequest } from './pay-request.js';
import { type Forwarded, sendSigned, upstreamFailure } from './upstream.js';
import { capturedUsage, recordUsage } from './usage-capture.js';

/**
 * A request for the seller's API, start to end (the paid-call path): read its facts, claim its
 * payment, forward it signed, then either turn the seller's 402 into a priced challenge or record
 * the usage the seller reported, settle the payment and deliver the response with its billing
 * headers. A payment is settled before the head is written, so its headers can ride on it.
 *
 * Traced, the call is one span (`paid call`) with the challenge, claim, upstream and settlement
 * as its children; an agent's own `traceparent` is not followed (the public starts no trace of ours).
 */
export function forwardRequest(services: ProxyServices, req: IncomingMessage, res: ServerResponse, seller: PaySeller): Promise<void> {
  if (!services.tracing) return forward(services, req, res, seller);
  return inSpan(
    services.tracing,
    'paid call',
    (span) =>
      forward(services, req, res, seller).finally(() =>
        span?.setAttributes(traceAttributes({ httpStatus: res.statusCode, requestId: res.getHeader(HUB_HEADERS.requestId)?.toString() })),
      ),
    { kind: SpanKind.SERVER, attributes: traceAttributes({ sellerId: seller.id, method: req.method }) },
  );
}

async function forward(services: ProxyServices, req: IncomingMessage, res: ServerResponse, seller: PaySeller): Promise<void> {
  const request = await readPayRequest(services, req, seller);
  const { caller } = request;
  const record: RequestRecordInput = {
    id: newRequestId(caller.kind === 'agent'),
    sellerId: seller.id,
    agentId: caller.kind === 'agent' ? caller.agentId : null,
    buyerId: caller.kind === 'agent' ? caller.buyerId : null,
    method: request.method,
    path: request.target.slice(0, MAX_RECORDED_PATH),
    sandbox: seller.sandbox,
    lifecycle: 'forwarded',
    mode: request.mode,
    createdAt: new Date().toISOString(),
  };

  // A paid retry runs under the challenged request's id, which the control-plane stored with the challenge.
  let payment = await Payment.claim(services, request);
  if (payment) {
    Object.assign(record, { id: payment.claimed.requestId, agentId: payment.claimed.agentId, buyerId: payment.claimed.buyerId });
  } else if (record.agentId) {
    // The seller's usage check must find this request: its record goes out on the next turn of the
    // event loop, and a check that arrives first waits for it (its id says one is coming). A record
    // that cannot be stored leaves the seller's check denied, as for an unknown request.
    services.recorder.create(record, { urgent: true }).catch(() => {});
  }
  // Logs of this request (its access line, any failure) name the id the agent and seller see.
  tagRequest(res, record.id);
  // A session's cooperative refund was done by its claim: its receipt is the answer, nothing is forwarded.
  if (payment?.claimed.refund) {
    const { refund } = payment.claimed;
    const headers = { 'content-type': 'application/json', [X402_HEADERS.response]: encodeHeaderJson(refund) };
    const body = Buffer.from(JSON.stringify({ refunded: refund.amount, transaction: refund.transaction }));
    await deliver(res, 200, headers, body, services.metrics);
    return finish(services, record, true, res.writableFinished ? 'delivered' : 'failed', undefined);
  }
  const identity: Identity = {
    requestId: record.id,
    agentId: record.agentId ?? undefined,
    buyerId: record.buyerId,
    sandbox: seller.sandbox,
  };

  // At most twice: a seller's 402 that the agent's credit pays is forwarded once more, paid.
  for (;;) {
    let forwarded: Forwarded | undefined;
    let answer: PlainResponse;
    const reply = request.sealed && replyAgreement(services.jwe, request.sealed);
    try {
      forwarded = await sendWithFreshSecret(services, request, identity, new ClientGone(res));
      // The answer to an encrypted request is encrypted before its payment settles: a body that
      // cannot be (too large, cut off) fails the call unpaid, like a seller that broke off.
      answer =
        request.sealed && reply && forwarded.response.statusCode !== 402
          ? await sealResponse(services.jwe, request.sealed, reply, forwarded.response, services.config.proxy.maxEncryptedResponseBytes)
          : forwarded.response;
    } catch (err) {
      await payment?.release();
      if (err instanceof ApiError) {
        if (forwarded) finish(services, record, Boolean(payment), 'failed', forwarded.response.statusCode);
        throw err;
      }
      const failure = upstreamFailure(err);
      services.metrics.upstreamError(failure.kind);
      finish(services, record, Boolean(payment), 'failed', undefined);
      throw failure.error;
    }
    const { statusCode: status } = forwarded.response;
    if (status !== 402) return deliverAnswer(services, res, seller, record, identity, payment, answer);

    // A challenged request is stored by the control-plane with its challenge.
    await payment?.settle(status);
    const paid = await answerWithChallenge(services, request, identity, forwarded.response, res, payment === undefined).catch(
      (err: unknown) => {
        // A 402 hub could not turn into a challenge (cut off, unpriceable) is a failed call.
        if (err instanceof ApiError && err.code.startsWith('upstream_')) finish(services, record, Boolean(payment), 'failed', status);
        throw err;
      },
    );
    if (!paid) return;
    payment = Payment.fromCredit(services, paid.paymentId, paid.claimed);
  }
}

/** The seller's answer, other than a 402, to the agent: usage captured, the payment settled, billing headers on it. */
async function deliverAnswer(
  services: ProxyServices,
  res: ServerResponse,
  seller: PaySeller,
  record: RequestRecordInput,
  identity: Identity,
  payment: Payment | undefined,
  response: PlainResponse,
): Promise<void> {
  const { statusCode: status, headers: upstreamHeaders, body } = response;
  const headers = agentResponseHeaders(upstreamHeaders);
  const captured = capturedUsage(seller, identity, status, upstreamHeaders);
  const usage = captured && 'usage' in captured ? captured.usage : undefined;
  let usageError = captured && 'error' in captured ? captured.error : undefined;
  if (payment) {
    const settled = await payment.settle(status, usage);
    Object.assign(headers, settled.headers);
    usageError ??= settled.usageError;
  } else if (usage) {
    usageError = await recordUsage(services, usage);
  }
  // A failed settlement (set by the billing headers) outranks a usage problem: it is the agent's money.
  if (usageError && !headers[HUB_HEADERS.usageError]) headers[HUB_HEADERS.usageError] = usageError;
  await deliver(res, status, headers, body, services.metrics);
  finish(services, record, Boolean(payment), res.writableFinished ? 'delivered' : 'failed', status);
}

/** Sends the request signed; a 401 may mean the seller rotated its secret since it was cached: retry once with the newest. */
async function sendWithFreshSecret(
  services: ProxyServices,
  request: PayRequest,
  identity: Identity,
  signal: ClientGone,
): Promise<Forwarded> {
  return inSpan(services.tracing, 'upstream', async (span) => {
    const forwarded = await sendRetryingStaleSecret(services, request, identity, signal);
    span?.setAttribute('http.response.status_code', forwarded.response.statusCode);
    return forwarded;
  });
}

async function sendRetryingStaleSecret(
  services: ProxyServices,
  request: PayRequest,
  identity: Identity,
  signal: ClientGone,
): Promise<Forwarded> {
  const forwarded = await sendSigned(services.pools, request, request.seller, identity, signal);
  if (forwarded.response.statusCode !== 401) return forwarded;
  const fresh = await services.catalog.refresh(request.seller, request.req.headers.host);
  if (!fresh?.signingSecrets[0] || fresh.signingSecrets[0].kid === forwarded.kid) return forwarded;
  await forwarded.response.body.dump();
  return sendSigned(services.pools, request, fresh, identity, signal);
}

/**
 * Stores the request's outcome in the background (a lost one costs analytics, not money): a
 * completion for a request stored up front (identified or paid), a count for an anonymous call.
 */
function finish(
  services: ProxyServices,
  record: RequestRecordInput,
  storedEarlier: boolean,
  lifecycle: 'delivered' | 'failed',
  upstreamStatus: number | undefined,
): void {
  if (!storedEarlier && !record.agentId) {
    services.recorder.tally(record.sellerId, record.sandbox, lifecycle);
    return;
  }
  services.recorder
    .complete({ id: record.id, lifecycle, upstreamStatus: upstreamStatus ?? null, completedAt: new Date().toISOString() })
    .catch(() => {});
}
