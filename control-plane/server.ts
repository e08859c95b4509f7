import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TRPCError } from '@trpc/server';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { createHttpServer } from '../runtime/http-server.js';
import { MAX_BODY_BYTES } from '../runtime/json-body.js';
import { sendError, sendJson } from '../runtime/respond.js';
import { ApiError } from '../shared/errors.js';
import type { ControlPlaneServices, RequestContext } from './context.js';
import { databaseIsReachable } from './db/client.js';
import { createDirectCalls } from './internal/direct-calls.js';
import { MAX_INTERNAL_BODY_BYTES, presentsInternalToken } from './internal/internal-token.js';
import { paymentsReadiness } from './payments/readiness.js';
import { createRestHandler } from './rest/handler.js';
import { createHotRoutes } from './rest/hot-routes.js';
import { appRouter } from './router.js';

const TRPC_PREFIX = '/trpc/';
const REST_PREFIX = '/v1/';

/** The control-plane's HTTP surface: health, the internal tRPC API and the REST API under /v1. */
export function createControlPlaneServer(services: ControlPlaneServices): Server {
  const { logger } = services;
  const handleRest = createRestHandler(services);
  const hot = createHotRoutes(services);
  const logFailure = ({ error, path: procedure }: { error: TRPCError; path: string | undefined }) => {
    if (error.code === 'INTERNAL_SERVER_ERROR') logger.error({ err: error.cause ?? error, procedure }, 'procedure failed');
  };
  const direct = createDirectCalls(services, logFailure);
  const payments = paymentsReadiness(services.payments);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;

    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      if (!(await databaseIsReachable(services.db))) return sendJson(res, 503, { status: 'database_unreachable' });
      return sendJson(res, 200, { status: 'ready', ...(await payments()) });
    }
    if (path.startsWith(TRPC_PREFIX)) {
      const procedure = path.slice(TRPC_PREFIX.length);
      if (direct.serves(req, procedure, (req.url ?? '').slice(path.length))) return direct.handle(req, res, procedure);
      return nodeHTTPRequestHandler({
        req,
        res,
        path: procedure,
        router: appRouter,
        createContext: (): RequestContext => ({ ...services, req, res }),
        onError: logFailure,
        // As on /v1, but for the proxy's batches of records. hub's clients send one call at a
        // time; a batch of many would multiply a request's cost (a sign-in's scrypt) past what
        // any per-request limit sees.
        maxBodySize: presentsInternalToken(req, services.internalToken) ? MAX_INTERNAL_BODY_BYTES : MAX_BODY_BYTES,
        maxBatchSize: 1,
      });
    }
    // The usage and page-view routes sellers call on every request skip the generic REST machinery.
    if (hot.serves(req.method, path)) return hot.handle(req, res, path);
    if (path.startsWith(REST_PREFIX)) return handleRest(req, res, path);
    throw new ApiError('not_found');
  };

  return createHttpServer(
    (req, res) => {
      handle(req, res).catch((err) => {
        const { status } = sendError(res, err);
        if (status >= 500) logger.error({ err, url: req.url, method: req.method }, 'request failed');
      });
    },
    services.config.requests,
    logger,
    { accessLog: services.config.accessLog },
  );
}
