import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TRPCError } from '@trpc/server';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { inServerSpan, type Tracing } from '../../runtime/tracing.js';
import { ApiError } from '../../shared/errors.js';
import { traceAttributes } from '../../shared/trace-attributes.js';
import type { ControlPlaneServices, RequestContext } from '../context.js';
import { createDirectCalls } from './direct-calls.js';
import { MAX_INTERNAL_BODY_BYTES, requireInternalToken } from './internal-token.js';
import { internalApiRouter } from './router.js';

type OnError = (failure: { error: TRPCError; path: string | undefined }) => void;

/**
 * `/trpc/<procedure>`: the proxy's API and nothing else. The management API is REST under /v1;
 * on /trpc it would be a second public surface with another error shape. Before tRPC sees a
 * request, it must carry the internal token (else 401, as a refused credential on /v1) and name
 * only internal procedures (else 404); both refusals are the spec's envelope. What passes is
 * answered in tRPC's wire format, as the proxy's client reads it.
 */
export function createInternalEndpoint(services: ControlPlaneServices, onError: OnError, tracing?: Tracing) {
  const direct = services.config.controlPlane.internalCalls === 'direct' ? createDirectCalls(services, onError, tracing) : undefined;
  const procedures = internalApiRouter._def.procedures as Record<string, unknown>;

  return async (req: IncomingMessage, res: ServerResponse, procedure: string, search: string): Promise<void> => {
    requireInternalToken(req, services.internalToken);
    // A batch names its procedures joined by commas (one call per request is allowed, below).
    if (!procedure.split(',').every((name) => Object.hasOwn(procedures, name))) {
      throw new ApiError('not_found', 'No such internal procedure; the management API is under /v1.');
    }
    if (direct?.serves(req, procedure, search)) return direct.handle(req, res, procedure);
    // Under the caller's span, as the direct lane serves its procedures (direct-calls.ts).
    return inServerSpan(tracing, procedure, req.headers, (span) =>
      nodeHTTPRequestHandler({
        req,
        res,
        path: procedure,
        router: internalApiRouter,
        createContext: (): RequestContext => ({ ...services, req, res }),
        onError,
        maxBodySize: MAX_INTERNAL_BODY_BYTES,
        // The proxy sends one call at a time; a batch would only multiply what one request costs.
        maxBatchSize: 1,
      }).finally(() => span?.setAttributes(traceAttributes({ httpStatus: res.statusCode }))),
    );
  };
}
