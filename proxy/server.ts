import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { createHttpServer } from '../runtime/http-server.js';
import { sendError, sendJson } from '../runtime/respond.js';
import { AGENT_PATHS } from '../shared/agent-paths.js';
import { isDiscoveryPath } from '../shared/discovery/paths.js';
import { JWKS_PATH } from '../shared/encryption/suite.js';
import { ApiError } from '../shared/errors.js';
import { normalizeHost } from '../shared/pay-host.js';
import { authRecipe } from './agents/agent-auth.js';
import { handleClaim, isClaimPath } from './agents/agent-claims.js';
import { handleRegistration } from './agents/registration.js';
import { publicOrigin } from './arrival/public-origin.js';
import { assertServableTarget } from './arrival/request-target.js';
import type { ProxyServices } from './context.js';
import { serveDiscoveryDocument } from './discovery/documents.js';
import { JWKS_CACHE_CONTROL, sellerJwks } from './encryption/jwks.js';
import { forwardRequest } from './paid-call/forward-request.js';
import { handleStorefront, isStorefrontPath } from './storefront/purchases.js';

/**
 * The probes a load balancer sends. Metrics are not among them: they are the operator's and are
 * served on a port of their own (proxy/metrics-server.ts), never on the pay URL's.
 */
const OPERATIONAL_PATHS = new Set(['/healthz', '/readyz']);

/** Hosts that can never be a pay host: the proxy's own probes answer there. */
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
    const ping = await services.controlPlane.call('ping').catch(() => undefined);
    if (!ping?.ok || !ping.database) return sendJson(res, 503, { status: 'control_plane_unreachable' });
    // Whether payments can be taken does not make the pay URL unready (free and identity calls
    // still work); it is said beside the status, as the control-plane's /readyz says it.
    const { ok: _ok, database: _database, ...payments } = ping;
    return sendJson(res, 200, { status: 'ready', ...payments });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    assertServableTarget(req);
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

    if (path === JWKS_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      return sendJson(res, 200, sellerJwks(seller), { 'cache-control': JWKS_CACHE_CONTROL });
    }
    if (path === '/manifest.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      // Every pay URL endpoint but per-call payment is for registered agents (spec: Agent credentials).
      const caller = await services.agents.identify(req.headers.authorization, seller.id);
      if (caller.kind !== 'agent') {
        throw new ApiError('bearer_required', 'The manifest is for registered agents.', {
          auth: authRecipe(publicOrigin(req, services.config.proxy.trustProxy)),
        });
      }
      const manifest = await services.catalog.manifest(seller.id);
      if (!manifest) throw new ApiError('seller_not_found');
      return sendJson(res, 200, manifest, { 'cache-control': 'private, max-age=10', vary: 'authorization' });
    }
    if (isDiscoveryPath(path)) return serveDiscoveryDocument(path, req, res, seller, services);
    if (isClaimPath(path)) return handleClaim(path, req, res, seller, services);
    if (isStorefrontPath(path)) return handleStorefront(path, req, res, seller, services);
    if (path === AGENT_PATHS.challenge || path === AGENT_PATHS.register) {
      return handleRegistration(path, req, res, seller, services);
    }
    return forwardRequest(services, req, res, seller);
  };

  const server = createHttpServer(
    (req, res) => {
      const started = performance.now();
      metrics.started();
      res.once('close', () => metrics.observe(res.statusCode, performance.now() - started));
      handle(req, res).catch((err) => {
        const { status } = sendError(res, err);
        if (status >= 500 && !(err instanceof ApiError)) logger.error({ err, url: req.url, method: req.method }, 'request failed');
        // A control-plane the proxy could not reach (control-plane-client.ts): one line, with the transport's error.
        else if (err instanceof ApiError && err.cause) logger.warn({ err: err.cause, url: req.url, method: req.method }, err.message);
      });
    },
    services.config.requests,
    logger,
    { accessLog: services.config.accessLog },
  );
  // Bodies are read by the proxy itself with its own limit; keep-alive clients are common.
  server.keepAliveTimeout = 65_000;
  return server;
}
