import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../shared/errors.js';
import { tokenKind } from '../../shared/tokens.js';
import type { Db } from '../db/client.js';
import { authenticate, type Credential } from './credentials.js';
import { CSRF_HEADER, csrfTokenMatches, sessionCookieOf } from './session-cookie.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The credential of a management request: its bearer token when it sends one (API clients, the
 * CLI: no cookie is looked at), else the dashboard's session cookie. A cookie is sent by the
 * browser whoever wrote the page, so a write carried by one must prove it comes from the
 * dashboard: the session's CSRF token in `x-hub-csrf` (a header no other site can set without
 * hub's CORS consent, which hub never gives), and no other site named in `Sec-Fetch-Site`.
 */
export async function authenticateRequest(db: Db, req: IncomingMessage): Promise<Credential> {
  const token = req.headers.authorization === undefined ? sessionCookieOf(req.headers) : undefined;
  if (token === undefined) return authenticate(db, req.headers);
  // Only a session lives in the cookie: an API key planted there is refused like a wrong token.
  if (tokenKind(token) !== 'session') throw new ApiError('invalid_token');
  if (!SAFE_METHODS.has(req.method ?? 'GET')) assertFromDashboard(req, token);
  return authenticate(db, { authorization: `Bearer ${token}` });
}

function assertFromDashboard(req: IncomingMessage, token: string): void {
  const sent = req.headers[CSRF_HEADER];
  if (!csrfTokenMatches(token, typeof sent === 'string' ? sent : undefined)) throw new ApiError('csrf_check_failed');
  // What the browser says of the page that sent it; a pay host is a sibling of the same site.
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') throw new ApiError('csrf_check_failed', 'This write came from another site.');
}
