import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { safeEqual } from '../../shared/tokens.js';

/**
 * The dashboard's session travels in a cookie (docs/decisions.md#D-234): the same `hubses_…`
 * token sign-in answers, kept where page script cannot read it (HttpOnly), sent only over a
 * secure context (browsers count loopback as one) and only by the control-plane's own pages
 * (SameSite=Strict). Beside it, a readable cookie carries the session's CSRF token, which the
 * dashboard echoes in a header on every write (auth/request-credential.ts checks it).
 */
// `__Host-`: a browser takes these cookies only from this host itself, over a secure context, for
// every path, never with a Domain: a pay URL (a sibling host of the same site, whose sellers'
// answers hub passes on) cannot plant a session of its own here.
export const SESSION_COOKIE = '__Host-hub_session';
export const CSRF_COOKIE = '__Host-hub_csrf';
export const CSRF_HEADER = 'x-hub-csrf';

const ATTRIBUTES = 'Path=/; Secure; SameSite=Strict';

/**
 * The CSRF token of a session: derived from its token, so it needs no storage, cannot be
 * planted by another site (a cookie set from a sibling host does not match the session) and ends
 * with the session.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('hub dashboard csrf').digest('base64url');
}

export function csrfTokenMatches(sessionToken: string, sent: string | undefined): boolean {
  return sent !== undefined && safeEqual(sent, csrfTokenOf(sessionToken));
}

/** Sets both cookies on a successful sign-in; they expire with the session. */
export function setSessionCookies(res: ServerResponse, token: string, expiresAt: Date): void {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  res.appendHeader('set-cookie', [
    `${SESSION_COOKIE}=${token}; ${ATTRIBUTES}; HttpOnly; Max-Age=${maxAge}`,
    `${CSRF_COOKIE}=${csrfTokenOf(token)}; ${ATTRIBUTES}; Max-Age=${maxAge}`,
  ]);
}

/** Clears both cookies (sign-out). */
export function clearSessionCookies(res: ServerResponse): void {
  res.appendHeader('set-cookie', [`${SESSION_COOKIE}=; ${ATTRIBUTES}; HttpOnly; Max-Age=0`, `${CSRF_COOKIE}=; ${ATTRIBUTES}; Max-Age=0`]);
}

/** The session token of the cookie header, if it carries one; none when it carries two (whose would it be?). */
export function sessionCookieOf(headers: IncomingHttpHeaders): string | undefined {
  const found: string[] = [];
  for (const part of (headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) found.push(part.slice(at + 1).trim());
  }
  return found.length === 1 && found[0] ? found[0] : undefined;
}
