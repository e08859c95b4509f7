import type { IncomingHttpHeaders } from 'node:http';

/**
 * The token of an `Authorization: Bearer <token>` header, or undefined when there is none. The
 * scheme is case-insensitive (RFC 9110); any other scheme counts as no bearer token.
 */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(headers.authorization ?? '');
  return match?.[1];
}
