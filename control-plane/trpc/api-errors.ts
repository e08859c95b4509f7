import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { ApiError } from '../../shared/errors.js';
import { describeIssues, type Issue } from '../../shared/validation-message.js';

/**
 * hub's errors inside tRPC. Procedures throw `ApiError`; tRPC would file anything that is not a
 * `TRPCError` as a 500, so the error is re-thrown as a `TRPCError` of the matching status with the
 * `ApiError` as its cause, and both bindings (REST, tRPC) read the envelope back from there.
 */

const CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  501: 'NOT_IMPLEMENTED',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

export function trpcErrorFrom(error: ApiError): TRPCError {
  return new TRPCError({ code: CODE_BY_STATUS[error.status] ?? 'INTERNAL_SERVER_ERROR', message: error.message, cause: error });
}

/**
 * The `ApiError` a tRPC error stands for: hub's own, or a validation failure (400 with a
 * human-readable message in `error`). Undefined for anything unexpected, which is a 500.
 */
export function apiErrorOf(error: TRPCError): ApiError | undefined {
  const cause: unknown = error.cause;
  if (cause instanceof ApiError) return cause;
  if (error.code === 'BAD_REQUEST' && hasIssues(cause)) return ApiError.validation(describeIssues(cause.issues));
  return undefined;
}

function hasIssues(value: unknown): value is { issues: Issue[] } {
  return typeof value === 'object' && value !== null && Array.isArray((value as { issues?: unknown }).issues);
}
