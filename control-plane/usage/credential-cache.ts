import type { IncomingHttpHeaders } from 'node:http';
import { hashToken } from '../../shared/tokens.js';
import { authenticate, type Credential } from '../auth/credentials.js';
import { bearerToken } from '../auth/bearer-token.js';
import type { Db } from '../db/client.js';

/**
 * API keys as the usage routes see them, remembered for a few seconds: a seller checks and reports
 * on every call its API serves, and looking the key up each time would cost more than the check.
 * The price is that a revoked key keeps working on these two routes for up to `CREDENTIAL_TTL_MS`.
 * Only verified API keys are remembered; anything else is looked up (and refused) every time.
 */
export const CREDENTIAL_TTL_MS = 5_000;
/** A bound on memory: past it the cache starts over. */
const MAX_ENTRIES = 10_000;

export type CredentialCache = { authenticate(headers: IncomingHttpHeaders, now?: number): Promise<Credential> };

export function credentialCache(db: Db, ttlMs = CREDENTIAL_TTL_MS): CredentialCache {
  const entries = new Map<string, { credential: Credential; expiresAt: number }>();
  return {
    async authenticate(headers, now = Date.now()) {
      const token = bearerToken(headers);
      const key = token && hashToken(token);
      const entry = key ? entries.get(key) : undefined;
      if (entry && entry.expiresAt > now) return entry.credential;

      const credential = await authenticate(db, headers);
      if (key && credential.kind === 'apiKey') {
        if (entries.size >= MAX_ENTRIES) entries.clear();
        entries.set(key, { credential, expiresAt: now + ttlMs });
      }
      return credential;
    },
  };
}
