import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { isIP } from 'node:net';
import { ApiError } from '../shared/errors.js';
import { newRequestId } from '../shared/ids.js';
import { normalizeHost } from '../shared/pay-host.js';
import { sendError, sendJson } from '../runtime/respond.js';
import type { RequestRecordInput } from '../control-plane/internal/request-records.js';
import { ANONYMOUS, carriesAgentToken } from './agent-directory.js';
import { ClientGone } from './client-gone.js';
import { EMPTY_BODY, hasNoBody, readBody } from '../runtime/read-body.js';
import type { ProxyServices } from './context.js';
import { deliver } from './deliver.js';
import { sendSigned, type Forwarded } from './forward.js';
import type { Identity } from './headers.js';
import { handleRegistration, registrationRecipe, REGISTRATION_PATHS } from './registration.js';
import type { PaySeller } from './seller-catalog.js';
import { upstreamFailure } from './upstream-errors.js';
import { readPaymentProof } from './payments/proof.js';
import { sha256Hex } from '../shared/signature.js';

const OPERATIONAL_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Hosts that can never be a pay host: the proxy's own operational endpoints answer there. */
function isOperatorHost(host: string): boolean {
  if (host === 'localhost') return true;
  // An IP literal starts with a digit or '[', or holds a ':'; skip the IP parse for names.
  const first = host.charCodeAt(0);
  if (first !== 91 && (first < 48 || first > 57) && !host.includes(':')) return false;
  return isIP(host.replace(/^\[|\]$/g, '')) !== 0;
}

/** The pay URL: every host under HUB_PAY_DOMAIN (and sellers' custom hostnames) lands here. */
export function createProxyServer(services: ProxyServices): Server {
  const { logger, metrics } = services;

  const operational = async (path: string, res: ServerResponse) => {
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      return void res.end(metrics.render());
    }
    const ready = await services.controlPlane.internal.ping.query().then(
      (r) => r.ok && r.database,
      () => false,
    );
    return sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'control_plane_unreachable' });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const host = normalizeHost(req.headers.host);
    if (host === undefined || isOperatorHost(host)) {
      if (OPERATIONAL_PATHS.has(path)) return operational(path, res);
      throw new ApiError('seller_not_found');
    }

    const found = services.catalog.lookup(host);
    const seller = found instanceof Promise ? await found : found;
    if (!seller) {
      if (OPERATIONAL_PATHS.has(path)) return operational(path, res);
      throw new ApiError('seller_not_found');
    }

    if (path === '/manifest.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      const manifest = await services.catalog.manifest(seller.id);
      if (!manifest) throw new ApiError('seller_not_found');
      return sendJson(res, 200, manifest, { 'cache-control': 'public, max-age=10' });
    }
    if (path === REGISTRATION_PATHS.challenge || path === REGISTRATION_PATHS.register) {
      return handleRegistration(path, req, res, seller, services.controlPlane);
    }
    return forwardRequest(services, req, res, seller);
  };

  const server = createServer((req, res) => {
    const started = performance.now();
    res.once('close', () => metrics.observe(res.statusCode, performance.now() - started));
    handle(req, res).catch((err) => {
      const { status } = sendError(res, err);
      if (status >= 500 && !(err instanceof ApiError)) logger.error({ err, url: req.url, method: req.method }, 'request failed');
    });
  });
  // Bodies are read by the proxy itself with its own limit; keep-alive clients are common.
  server.keepAliveTimeout = 65_000;
  return server;
}

async function forwardRequest(services: ProxyServices, req: IncomingMessage, res: ServerResponse, seller: PaySeller): Promise<void> {
  const authorization = req.headers.authorization;
  const caller = carriesAgentToken(authorization) ? await services.agents.identify(authorization) : ANONYMOUS;
  if (caller.kind === 'unknown_token') {
    throw new ApiError('bearer_required', 'The agent token is unknown or was replaced.', { auth: registrationRecipe(req.headers.host) });
  }
  if (!seller.signingSecrets.length) throw new ApiError('signing_secret_required');
  // `hub-mode: free` asks for the buyer's included units; any other value, or none, is paid mode.
  const mode =
    String(req.headers['hub-mode'] ?? '')
      .trim()
      .toLowerCase() === 'free'
      ? 'free'
      : 'paid';
  if (mode === 'free' && caller.kind !== 'agent') {
    throw new ApiError('bearer_required', 'Free mode needs a registered agent credential, claimed by a buyer with a verified email.', {
      auth: registrationRecipe(req.headers.host),
    });
  }
  const proof = readPaymentProof(req, services.mppSecret);
  if (proof.kind === 'malformed') throw new ApiError('invalid_request', `Malformed payment header: ${proof.why}.`);
  if (proof.kind === 'refused') throw new ApiError('payment_required', 'settlement_failed', { settlementReason: proof.reason });

  const body = hasNoBody(req) ? EMPTY_BODY : await readBody(req, services.config.proxy.maxBodyBytes);
  const record: RequestRecordInput = {
    id: newRequestId(caller.kind === 'agent'),
    sellerId: seller.id,
    agentId: caller.kind === 'agent' ? caller.agentId : null,
    buyerId: caller.kind === 'agent' ? caller.buyerId : null,
    method: req.method ?? 'GET',
    path: (req.url ?? '/').slice(0, 2048),
    sandbox: seller.sandbox,
    lifecycle: 'forwarded',
    mode,
    createdAt: new Date().toISOString(),
  };

  let paymentId: string | undefined;
  if (proof.kind === 'paid') {
    // A paid retry runs under the challenged request's id; the control-plane admits it once.
    const claim = await services.controlPlane.internal.claimPaidRequest.mutate({
      paymentId: proof.paymentId,
      method: (req.method ?? 'GET').toUpperCase(),
      pathAndQuery: req.url ?? '/',
      bodyDigest: sha256Hex(body),
      protocol: proof.protocol,
      payload: proof.payload,
    });
    if (!claim.ok) {
      if (claim.error === 'payment_required')
        throw new ApiError('payment_required', claim.reason, { settlementReason: claim.settlementReason });
      throw new ApiError(claim.error);
    }
    paymentId = proof.paymentId;
    Object.assign(record, { id: claim.requestId, agentId: claim.agentId, buyerId: claim.buyerId });
  } else if (record.agentId) {
    // The seller's usage check must find this request: its record goes out on the next turn of the
    // event loop, and a check that arrives first waits for it (its id says one is coming). A record
    // that cannot be stored leaves the seller's check denied, as for an unknown request.
    services.recorder.create(record, { urgent: true }).catch(() => {});
  }
  const identity: Identity = {
    requestId: record.id,
    agentId: record.agentId ?? undefined,
    buyerId: record.buyerId,
    sandbox: seller.sandbox,
  };

  const clientGone = new ClientGone(res);

  let forwarded: Forwarded;
  try {
    const dropAuthorization = carriesAgentToken(authorization) || (proof.kind === 'paid' && proof.carriedInAuthorization);
    const exchange = { pools: services.pools, seller, req, body, identity, dropAuthorization, signal: clientGone };
    forwarded = await sendSigned(exchange);
    if (forwarded.response.statusCode === 401) {
      // The seller may have rotated its secret since we cached it: retry once with the newest.
      const fresh = await services.catalog.refresh(seller, req.headers.host);
      if (fresh?.signingSecrets[0] && fresh.signingSecrets[0].kid !== forwarded.kid) {
        await forwarded.response.body.dump();
        forwarded = await sendSigned({ ...exchange, seller: fresh });
      }
    }
  } catch (err) {
    if (paymentId) await services.controlPlane.internal.settlePaidRequest.mutate({ paymentId, upstreamStatus: 502 }).catch(() => {});
    if (err instanceof ApiError) throw err;
    const failure = upstreamFailure(err);
    services.metrics.upstreamError(failure.kind);
    finish(services, record, Boolean(paymentId), 'failed', undefined);
    throw failure.error;
  }

  const outcome = await deliver(
    services,
    req,
    res,
    { seller, identity, body, paymentId, protocol: proof.kind === 'paid' ? proof.protocol : undefined },
    forwarded,
  );
  // A challenged request was stored by the control-plane with its challenge.
  if (outcome === 'delivered')
    finish(services, record, Boolean(paymentId), res.writableFinished ? 'delivered' : 'failed', forwarded.response.statusCode);
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
