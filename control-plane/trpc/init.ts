import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { ApiError, type ErrorCode, INTERNAL_ERROR_MESSAGE } from '../../shared/errors.js';
import type { RequestContext } from '../context.js';
import { unavailableDatabase } from '../db/unavailable.js';
import { presentsInternalToken } from '../internal/internal-token.js';
import { apiErrorOf, trpcErrorFrom } from './api-errors.js';

/** Route metadata beyond trpc-to-openapi's: what the REST binding and the OpenAPI document need. */
export type HubMeta = OpenApiMeta<{
  /** Who may call it, in words; set by the procedure builders (trpc/procedures.ts). */
  access?: string;
  /** The REST status of a success when it is not 200 (201 created, 204 no content). */
  successStatus?: 201 | 204;
  /** The route's own error codes, besides validation and the credential checks. */
  errors?: ErrorCode[];
}>;

export const t = initTRPC
  .context<RequestContext>()
  .meta<HubMeta>()
  .create({
    // tRPC clients get the spec's envelope too, under `data.envelope`; like REST clients, they
    // never see a stack or the message of an unexpected error (the server logs those).
    errorFormatter: ({ shape, error }) => {
      const { stack: _stack, ...data } = shape.data;
      const apiError = apiErrorOf(error);
      if (apiError) return { ...shape, message: apiError.message, data: { ...data, envelope: apiError.toBody() } };
      if (error.code === 'INTERNAL_SERVER_ERROR')
        return { ...shape, message: INTERNAL_ERROR_MESSAGE, data: { ...data, envelope: { error: INTERNAL_ERROR_MESSAGE } } };
      return { ...shape, data };
    },
  });

export const router = t.router;

/**
 * Outermost on every procedure: an `ApiError` thrown anywhere below leaves as a `TRPCError` of its
 * own status (tRPC would file it as a 500), with the envelope in its data (errorFormatter above).
 */
export const apiProcedure = t.procedure.use(async ({ ctx, next }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = result.error.cause;
  if (cause instanceof ApiError) throw trpcErrorFrom(cause);
  // A database that could not serve now (busy, unreachable, a conflict lost) is a 503 to retry.
  const unavailable = unavailableDatabase(cause);
  if (unavailable) {
    ctx.logger.warn({ err: cause }, 'database unavailable; answered 503');
    throw trpcErrorFrom(unavailable);
  }
  return result;
});

/** Procedures only hub's own proxy may call: it presents the internal token. */
export const internalProcedure = apiProcedure.use(({ ctx, next }) => {
  if (!presentsInternalToken(ctx.req, ctx.internalToken)) {
    throw new TRPCError({ code: 'UNAUTHORIZED', message: 'internal API token required' });
  }
  return next();
});
