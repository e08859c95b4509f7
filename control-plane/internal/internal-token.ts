import type { IncomingMessage } from 'node:http';
import { bearerToken } from '../../shared/bearer.js';
import { ApiError } from '../../shared/errors.js';
import { safeEqual } from '../../shared/tokens.js';

/**
 * The largest body the proxy sends the internal API: a batch of request records (1,000 created
 * with paths up to 2 KB, 1,000 completed, 10,000 tallies) runs to a few megabytes. Only a
 * request with the internal token is read at all.
 */
export const MAX_INTERNAL_BODY_BYTES = 16 * 1024 * 1024;

const NOT_FOR_YOU = "/trpc is hub's internal API, for its proxy; the management API is under /v1.";

/** Whether the request carries the internal token, which only hub's own proxy holds. */
export function presentsInternalToken(req: IncomingMessage, internalToken: string): boolean {
  const token = bearerToken(req.headers.authorization);
  return token !== undefined && safeEqual(token, internalToken);
}

/** Refuses, as the management API refuses a credential, a request without the internal token. */
export function requireInternalToken(req: IncomingMessage, internalToken: string): void {
  const token = bearerToken(req.headers.authorization);
  if (token === undefined) throw new ApiError('missing_bearer_token', NOT_FOR_YOU);
  if (!safeEqual(token, internalToken)) throw new ApiError('invalid_token', NOT_FOR_YOU);
}
