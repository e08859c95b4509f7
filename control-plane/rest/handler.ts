import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TRPCError } from '@trpc/server';
import { createOpenApiNodeHttpHandler, type NodeHTTPRequest } from 'trpc-to-openapi';
import { MAX_BODY_BYTES, readJsonBody } from '../../runtime/json-body.js';
import { sendJson } from '../../runtime/respond.js';
import { ApiError, errorResponse } from '../../shared/errors.js';
import type { ControlPlaneServices, RequestContext } from '../context.js';
import { appRouter } from '../router.js';
import { apiErrorOf } from '../trpc/api-errors.js';
import { buildOpenApiDocument, OPENAPI_PATH } from './openapi-document.js';
import { RecordedResponse } from './recorded-response.js';
import { methodsFor, restRoutes } from './route-table.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The management REST API under /v1: the same procedures as the tRPC API, served by
 * trpc-to-openapi from their `openapi` metadata. Around it, this binding owns what the spec
 * fixes: JSON bodies, 404/405 for unknown routes, success statuses, and the `{ error, reason? }`
 * envelope for every failure. Whatever it throws, the server turns into the envelope (and logs
 * when it is a 500).
 */
export function createRestHandler(services: ControlPlaneServices) {
  const routes = restRoutes(appRouter);
  const successStatus = new Map(routes.map((route) => [route.procedure, route.meta.successStatus]));
  const failures = new WeakMap<IncomingMessage, TRPCError>();
  let document: unknown;

  const openApiHandler = createOpenApiNodeHttpHandler<typeof appRouter, NodeHTTPRequest, ServerResponse>({
    router: appRouter,
    createContext: ({ req, res }): RequestContext => ({ ...services, req, res: (res as unknown as RecordedResponse).target }),
    responseMeta: ({ paths, errors }) => (errors.length ? {} : { status: successStatus.get(paths?.[0] ?? '') ?? 200 }),
    onError: ({ error, req }) => failures.set(req, error),
    maxBodySize: MAX_BODY_BYTES,
  });

  return async function handleRest(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    // Responses carry keys, secrets and session tokens; none of them belongs in a cache.
    res.setHeader('cache-control', 'no-store');
    const method = req.method ?? 'GET';

    if (path === OPENAPI_PATH) {
      if (method !== 'GET') return methodNotAllowed(res, ['GET']);
      document ??= buildOpenApiDocument(appRouter, services.config.controlPlane.url);
      return sendJson(res, 200, document);
    }

    const methods = resolvesToItself(path) ? methodsFor(routes, path) : [];
    if (methods.length === 0) throw new ApiError('not_found');
    assertPlainQuery((req.url ?? '').slice(path.length));
    if (!methods.includes(method)) return methodNotAllowed(res, methods);

    if (BODY_METHODS.has(method)) {
      // trpc-to-openapi takes a body already on the request as the parsed one.
      (req as NodeHTTPRequest).body = await readJsonBody(req);
      req.headers['content-type'] = 'application/json';
    }

    const recorded = new RecordedResponse(res);
    await openApiHandler(req as NodeHTTPRequest, recorded as unknown as ServerResponse);

    const failure = failures.get(req);
    if (failure) throw apiErrorOf(failure) ?? failure.cause ?? failure;
    if (recorded.statusCode === 204) {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(recorded.statusCode, { 'content-type': 'application/json; charset=utf-8' }).end(recorded.body);
  };
}

/**
 * Whether a URL parser leaves the path as it is. trpc-to-openapi routes the parsed path, so
 * `/v1/sellers/..`, `%2e%2e` or a backslash would reach another route than the one matched here;
 * none names a resource.
 */
function resolvesToItself(path: string): boolean {
  return new URL(path, 'http://hub.invalid').pathname === path;
}

/**
 * trpc-to-openapi gathers the query into a plain object, so a parameter named like one of its
 * built-in members (`constructor`, `__proto__`, `toString`) breaks it. No route takes one.
 */
function assertPlainQuery(search: string): void {
  for (const name of new URLSearchParams(search).keys()) {
    if (name in Object.prototype) throw ApiError.validation(`Unknown query parameter "${name}"`);
  }
}

function methodNotAllowed(res: ServerResponse, methods: string[]): void {
  const { status, body } = errorResponse(new ApiError('method_not_allowed'));
  sendJson(res, status, body, { allow: methods.join(', ') });
}
