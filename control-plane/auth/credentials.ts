import type { IncomingHttpHeaders } from 'node:http';
import { bearerToken } from '../../shared/bearer.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { isScope, type Scope } from '../../shared/scopes.js';
import { hashToken, KEY_PREFIX_LENGTH, newToken, tokenKind } from '../../shared/tokens.js';
import type { Db } from '../db/client.js';

/**
 * The management API's credentials, issued and checked in one place: API keys and dashboard
 * sessions are created here (their tokens stored only as hashes), bearer tokens authenticated,
 * and their last use recorded.
 */

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

/** Creates an API key; the key itself is returned once and only its hash is kept. */
export async function createApiKey(
  db: Db,
  input: { organizationId: string; name: string; scopes: readonly Scope[]; createdById?: string | null },
) {
  const key = newToken('apiKey');
  const apiKey = await db.apiKey.create({
    data: {
      id: newId('apiKey'),
      organizationId: input.organizationId,
      createdById: input.createdById ?? null,
      name: input.name,
      keyPrefix: key.slice(0, KEY_PREFIX_LENGTH),
      keyHash: hashToken(key),
      scopesJson: JSON.stringify([...new Set(input.scopes)]),
    },
  });
  return { key, apiKey };
}

export const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** Opens a dashboard session; returns the bearer token, which is stored only as a hash. */
export async function createSession(db: Db, userId: string, currentOrganizationId: string | null) {
  const token = newToken('session');
  const session = await db.session.create({
    data: {
      id: newId('session'),
      tokenHash: hashToken(token),
      userId,
      currentOrganizationId,
      expiresAt: new Date(Date.now() + SESSION_LIFETIME_MS),
    },
  });
  return { token, session };
}

/**
 * `lastUsedAt` of API keys and sessions is kept current to the minute, not to the request: a
 * credential used many times a second would otherwise cost a database write per request. The
 * timestamp is rewritten only when it is older than this.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

export function lastUsedIsStale(lastUsedAt: Date | null, now: Date): boolean {
  return lastUsedAt === null || now.getTime() - lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS;
}

/**
 * The `where` of the conditional update: it matches only while the stored value is still stale,
 * so concurrent requests on several control-planes write it once between them.
 */
export function staleLastUsed(id: string, now: Date) {
  return {
    id,
    OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }],
  };
}
