import type { IncomingMessage } from 'node:http';
import { bearerToken } from '../../shared/bearer.js';
import { safeEqual } from '../../shared/tokens.js';

/**
 * The largest body the proxy sends the internal API: a batch of request records (1,000 created
 * with paths up to 2 KB, 1,000 completed, 10,000 tallies) runs to a few megabytes. Any other
 * caller of /trpc gets the management API's limit.
 */
export const MAX_INTERNAL_BODY_BYTES = 16 * 1024 * 1024;

/** Whether the request carries the internal token, which only hub's own proxy holds. */
export function presentsInternalToken(req: IncomingMessage, internalToken: string): boolean {
  const token = bearerToken(req.headers.authorization);
  return token !== undefined && safeEqual(token, internalToken);
}
