/**
 * The token of an `Authorization: Bearer <token>` value, or undefined when there is none. The
 * scheme is case-insensitive (RFC 9110 §11.1); any other scheme counts as no bearer token.
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  return BEARER.exec(authorization)?.[1];
}

const BEARER = /^Bearer +(\S+) *$/i;
