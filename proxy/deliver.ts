import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { ApiError } from '../shared/errors.js';
import { sha256Hex } from '../shared/signature.js';
import { sendJson } from '../runtime/respond.js';
import { parseUsageHeader } from '../shared/usage-header.js';
import type { ProxyServices } from './context.js';
import { agentResponseHeaders, type Identity } from './headers.js';
import type { Forwarded } from './forward.js';
import { billingHeaders } from './payments/billing-headers.js';
import { challengeResponse, parseSellerPaymentRequired } from './payments/challenge-response.js';
import type { PaySeller } from './seller-catalog.js';

/** A seller's 402 body is read whole (it is priced, never shown); bigger than this is not one. */
const MAX_SELLER_402_BYTES = 65_536;

export type Exchange = {
  seller: PaySeller;
  identity: Identity;
  /** The request body as the agent sent it (the challenge binds its digest). */
  body: Buffer;
  /** Set on a paid retry: the attempt it pays for, and the protocol it was paid in. */
  paymentId?: string | undefined;
  protocol?: 'x402' | 'mpp' | undefined;
};

/**
 * Sends the seller's response to the agent. A seller's 402 becomes a priced challenge. Anything
 * else goes out with its status and headers (minus hop-by-hop fields and `hub-usage`), the body
 * streamed chunk by chunk as it arrives (server-sent events are never buffered). `hub-usage` is
 * honoured only on a 2xx; a paid retry is settled before the head is written, so the billing
 * headers can ride on it. Returns whether the request was turned into a challenge.
 */
export async function deliver(
  services: ProxyServices,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: Exchange,
  forwarded: Forwarded,
): Promise<'challenged' | 'delivered'> {
  const { response } = forwarded;
  const status = response.statusCode;

  if (status === 402) {
    if (exchange.paymentId)
      await services.controlPlane.internal.settlePaidRequest.mutate({ paymentId: exchange.paymentId, upstreamStatus: status });
    await challenge(services, req, res, exchange, forwarded);
    return 'challenged';
  }

  const headers = agentResponseHeaders(response.headers);
  const usageHeader = response.headers['hub-usage'];
  const usageError = usageHeader === undefined ? undefined : await captureUsage(services, exchange, status, usageHeader);
  if (exchange.paymentId) {
    const outcome = await services.controlPlane.internal.settlePaidRequest.mutate({
      paymentId: exchange.paymentId,
      upstreamStatus: status,
    });
    Object.assign(headers, billingHeaders(outcome, exchange.protocol ?? 'x402'));
  }
  if (usageError) headers['hub-usage-error'] = usageError;

  res.writeHead(status, headers);
  // The head normally leaves with the first body chunk (one write, not two); an event stream may
  // stay quiet for a while, so its head goes out at once.
  if (String(headers['content-type'] ?? '').startsWith('text/event-stream')) res.flushHeaders();
  try {
    await streamBody(response.body, res);
  } catch (err) {
    if ((err as { code?: string }).code === 'UND_ERR_BODY_TIMEOUT') services.metrics.upstreamError('body_timeout');
    res.destroy();
  }
  return 'delivered';
}

/**
 * Copies the upstream body to the agent chunk by chunk, as it arrives, pausing the upstream while
 * the agent's socket is full. (stream.pipeline does the same with an AbortController per call,
 * which is measurable at proxy request rates.) Resolves when the response has ended; rejects if
 * the upstream breaks off, and stops reading if the agent goes away.
 */
function streamBody(body: Readable, res: ServerResponse): Promise<void> {
  // Listeners are written inline: a named per-request closure costs a name-keeping call under tsx.
  return new Promise((resolve, reject) => {
    body.on('data', (chunk: Buffer) => {
      if (!res.write(chunk)) body.pause();
    });
    body.once('end', () => res.end(resolve));
    body.once('error', reject);
    res.on('drain', () => body.resume());
    res.once('close', () => {
      if (!res.writableFinished) body.destroy();
      resolve();
    });
  });
}

async function challenge(
  services: ProxyServices,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: Exchange,
  forwarded: Forwarded,
): Promise<void> {
  const raw = await readLimited(forwarded.response.body, MAX_SELLER_402_BYTES);
  const asked = raw && parseSellerPaymentRequired(raw);
  if (!asked) throw new ApiError('upstream_error', 'The seller answered 402 without a payment_required body hub can price.');
  const { identity, seller } = exchange;
  const result = await services.controlPlane.internal.createChallenge.mutate({
    sellerId: seller.id,
    requestId: identity.requestId,
    agentId: identity.agentId ?? null,
    buyerId: identity.buyerId ?? null,
    method: (req.method ?? 'GET').toUpperCase(),
    pathAndQuery: req.url ?? '/',
    bodyDigest: sha256Hex(exchange.body),
    serviceSlug: asked.serviceSlug,
    usage: asked.usage,
    ...(asked.planSlug ? { planSlug: asked.planSlug } : {}),
    sandbox: seller.sandbox,
  });
  if (!result.ok) return sendJson(res, result.status, result.envelope);
  const { body, headers } = challengeResponse(req, result.challenge, identity, exchange.body, services.mppSecret);
  sendJson(res, 402, body, headers);
}

async function readLimited(
  body: AsyncIterable<Buffer | Uint8Array> & { destroy?: () => void },
  limit: number,
): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy?.();
      return undefined;
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

async function captureUsage(
  services: ProxyServices,
  exchange: Exchange,
  status: number,
  header: string | string[],
): Promise<string | undefined> {
  if (status < 200 || status > 299) return undefined;
  const parsed = parseUsageHeader(Array.isArray(header) ? header.join(',') : header);
  if (!parsed.ok) return 'invalid_usage_header';
  if (parsed.items.length === 0) return undefined;
  const { seller, identity } = exchange;
  try {
    const result = await services.controlPlane.internal.captureUsage.mutate({
      requestId: identity.requestId,
      sellerId: seller.id,
      organizationId: seller.organizationId,
      usage: parsed.items,
    });
    return result.ok ? undefined : result.reason;
  } catch (err) {
    services.logger.error({ err, requestId: identity.requestId }, 'recording hub-usage failed');
    return 'settlement_failed';
  }
}
