import type { IncomingHttpHeaders } from 'node:http';
import { bearerToken } from '../../shared/bearer.js';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import { hashToken } from '../../shared/tokens.js';
import { authenticate, type Credential } from '../auth/credentials.js';
import type { Db } from '../db/client.js';

/**
 * API keys as the hot routes see them (rest/hot-routes.ts), remembered for half a second: a seller
 * checks and reports on every call its API serves and reports every page its site shows, and
 * looking the key up each time would cost more than the work. The price is that a revoked key
 * keeps working on those routes for up to `CREDENTIAL_TTL_MS`, on every control-plane alike
 * (replicas share no memory): within the second the spec's operators expect, at one lookup per
 * key and half second. Only verified API keys are remembered; anything else is looked up (and
 * refused) every time.
 */
export const CREDENTIAL_TTL_MS = 500;
/** A bound on memory: past it the cache starts over. */
const MAX_ENTRIES = 10_000;

export type CredentialCache = { authenticate(headers: IncomingHttpHeaders, now?: number): Promise<Credential> };

export function credentialCache(db: Db, ttlMs = CREDENTIAL_TTL_MS): CredentialCache {
  const entries = new ExpiringCache<string, Credential>({ ttlMs, maxEntries: MAX_ENTRIES });
  return {
    async authenticate(headers, now = Date.now()) {
      const token = bearerToken(headers.authorization);
      const key = token && hashToken(token);
      const cached = key ? entries.get(key, now) : undefined;
      if (cached) return cached;

      const credential = await authenticate(db, headers);
      if (key && credential.kind === 'apiKey') entries.set(key, credential, ttlMs, now);
      return credential;
    },
  };
}
