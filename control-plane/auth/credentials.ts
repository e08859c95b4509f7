import type { IncomingHttpHeaders } from 'node:http';
import { bearerToken } from '../../shared/bearer.js';
import { ApiError } from '../../shared/errors.js';
import { isScope, type Scope } from '../../shared/scopes.js';
import { hashToken, tokenKind } from '../../shared/tokens.js';
import type { Db } from '../db/client.js';
import { lastUsedIsStale, staleLastUsed } from './last-used.js';

/** Who is calling: an organization's API key, or a dashboard user's session. */
export type ApiKeyCredential = { kind: 'apiKey'; id: string; organizationId: string; scopes: Scope[] };
export type SessionCredential = { kind: 'session'; id: string; userId: string; currentOrganizationId: string | null };
export type Credential = ApiKeyCredential | SessionCredential;

/**
 * Verifies the bearer token of a request. No token: `missing_bearer_token`. A token that is not
 * a live API key or session (unknown, revoked, expired, or another kind of hub token):
 * `invalid_token`.
 */
export async function authenticate(db: Db, headers: IncomingHttpHeaders, now = new Date()): Promise<Credential> {
  const token = bearerToken(headers.authorization);
  if (!token) throw new ApiError('missing_bearer_token');
  const kind = tokenKind(token);
  if (kind === 'apiKey') return apiKeyCredential(db, token, now);
  if (kind === 'session') return sessionCredential(db, token, now);
  throw new ApiError('invalid_token');
}

async function apiKeyCredential(db: Db, token: string, now: Date): Promise<ApiKeyCredential> {
  const key = await db.apiKey.findUnique({ where: { keyHash: hashToken(token) } });
  if (!key || key.revokedAt) throw new ApiError('invalid_token');
  if (lastUsedIsStale(key.lastUsedAt, now)) {
    await db.apiKey.updateMany({ where: staleLastUsed(key.id, now), data: { lastUsedAt: now } });
  }
  return { kind: 'apiKey', id: key.id, organizationId: key.organizationId, scopes: parseScopes(key.scopesJson) };
}

async function sessionCredential(db: Db, token: string, now: Date): Promise<SessionCredential> {
  const session = await db.session.findUnique({ where: { tokenHash: hashToken(token) } });
  if (!session || session.revokedAt || session.expiresAt <= now) throw new ApiError('invalid_token');
  if (lastUsedIsStale(session.lastUsedAt, now)) {
    await db.session.updateMany({ where: staleLastUsed(session.id, now), data: { lastUsedAt: now } });
  }
  return { kind: 'session', id: session.id, userId: session.userId, currentOrganizationId: session.currentOrganizationId };
}

/** Scopes as stored; an unknown scope (from a newer hub, say) grants nothing rather than failing. */
export function parseScopes(scopesJson: string): Scope[] {
  const parsed: unknown = JSON.parse(scopesJson);
  return Array.isArray(parsed) ? parsed.filter(isScope) : [];
}
