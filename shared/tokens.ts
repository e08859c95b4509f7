import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from './ids.js';

/**
 * Bearer secrets: API keys, dashboard sessions, agent tokens. They carry ~238 bits of randomness,
 * so a plain SHA-256 is a safe at-rest hash (no password-style stretching needed) and lets a
 * lookup go straight to a unique index.
 */
export const tokenPrefixes = {
  apiKey: 'hub_',
  session: 'hubses_',
  agent: 'hubagt_',
  /** A seller's signing secret value; its HMAC key is the UTF-8 bytes of the whole string. */
  signingSecret: 'hubsk_',
  /** The one-time link that confirms a human's claim on an agent, and the link that releases it. */
  claimConfirmation: 'hubclm_',
  claimRelease: 'hubrel_',
  /** The one-time link that invites a person into an organization. */
  invitation: 'hubinv_',
} as const;

export type TokenKind = keyof typeof tokenPrefixes;

const TOKEN_RANDOM_LENGTH = 40;
/** How many characters of an API key are kept in clear (`keyPrefix`) to tell keys apart. */
export const KEY_PREFIX_LENGTH = 12;

export function newToken(kind: TokenKind): string {
  return tokenPrefixes[kind] + randomBase62(TOKEN_RANDOM_LENGTH);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function tokenKind(token: string): TokenKind | undefined {
  // Longest prefix first: `hub_` is a prefix of neither of the others, but stay explicit.
  if (token.startsWith(tokenPrefixes.session)) return 'session';
  if (token.startsWith(tokenPrefixes.agent)) return 'agent';
  if (token.startsWith(tokenPrefixes.signingSecret)) return 'signingSecret';
  if (token.startsWith(tokenPrefixes.apiKey)) return 'apiKey';
  return undefined;
}

/** Constant-time comparison of two strings (false when their lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
