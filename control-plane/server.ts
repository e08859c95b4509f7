import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TRPCError } from '@trpc/server';
import { loggablePath } from '../runtime/containment.js';
import { createHttpServer } from '../runtime/http-server.js';
import { sendError, sendJson } from '../runtime/respond.js';
import { inServerSpan } from '../runtime/tracing.js';
import { ApiError } from '../shared/errors.js';
import { traceAttributes } from '../shared/trace-attributes.js';
import { handleProviderWebhook, PROVIDER_WEBHOOK_PATH } from './card-payments/webhook.js';
import type { ControlPlaneServices } from './context.js';
import { createDashboardHandler, DASHBOARD_PREFIX } from './dashboard/serve.js';
import { databaseIsReachable } from './db/client.js';
import { unavailableDatabase } from './db/unavailable.js';
import { createInternalEndpoint } from './internal/trpc-endpoint.js';
import { railsReadiness } from './payments/readiness.js';
import { createRestHandler } from './rest/handler.js';
import { createHotRoutes } from './rest/hot-routes.js';

const TRPC_PREFIX = '/trpc/';
const REST_PREFIX = '/v1/';

/** The control-plane's HTTP surface: health, the internal tRPC API, the REST API under /v1 and the dashboard. */
export function createControlPlaneServer(services: ControlPlaneServices): Server {
  const { logger } = services;
  const handleRest = createRestHandler(services);
  const hot = createHotRoutes(services);
  const logFailure = ({ error, path: procedure }: { error: TRPCError; path: string | undefined }) => {
    if (error.code === 'INTERNAL_SERVER_ERROR') logger.error({ err: error.cause ?? error, procedure }, 'procedure failed');
  };
  const { tracing } = services;
  const handleInternal = createInternalEndpoint(services, logFailure, tracing);
  const serveDashboard = createDashboardHandler();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;

    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      if (!(await databaseIsReachable(services.db))) return sendJson(res, 503, { status: 'database_unreachable' });
      return sendJson(res, 200, { status: 'ready', ...(await railsReadiness(services.rails)) });
    }
    if (path.startsWith(TRPC_PREFIX)) {
      return handleInternal(req, res, path.slice(TRPC_PREFIX.length), (req.url ?? '').slice(path.length));
    }
    // The usage and page-view routes sellers call on every request skip the generic REST machinery.
    if (hot.serves(req.method, path)) {
      // Traced under the seller's own span when its request names one (`traceparent`).
      return inServerSpan(tracing, `${req.method} ${path}`, req.headers, (span) =>
        hot
          .handle(req, res, path)
          .finally(() => span?.setAttributes(traceAttributes({ method: req.method, route: path, httpStatus: res.statusCode }))),
      );
    }
    if (path.startsWith(REST_PREFIX)) return handleRest(req, res, path);
    if (path === PROVIDER_WEBHOOK_PATH) return handleProviderWebhook(services, req, res);
    // The dashboard, on the API's own origin: its session cookie and the API go together.
    if (path === '/' || path === '/dashboard') return redirect(res, DASHBOARD_PREFIX);
    if (path.startsWith(DASHBOARD_PREFIX)) return serveDashboard(req, res, path);
    throw new ApiError('not_found');
  };

  const server = createHttpServer(
    (req, res) => {
      handle(req, res).catch((thrown) => {
        const err = unavailableDatabase(thrown) ?? thrown;
        const { status, body } = sendError(res, err);
        if (status < 500) return;
        // A 5xx hub answers on purpose (a page or a seller's API it cannot reach, a database too
        // busy to serve) is expected in operation: one line with its reason, the path as the
        // access log keeps it. Anything else is a fault, logged with its stack.
        if (err instanceof ApiError) {
          logger.warn({ method: req.method, path: loggablePath(req.url), status, ...body }, 'request failed');
        } else logger.error({ err, path: loggablePath(req.url), method: req.method }, 'request failed');
      });
    },
    services.config.requests,
    logger,
    { accessLog: services.config.accessLog },
  );
  return server;
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location, 'content-length': '0' }).end();
}
