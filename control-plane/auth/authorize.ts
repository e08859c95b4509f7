import { ApiError } from '../../shared/errors.js';
import type { Role } from '../../shared/schemas/organizations.js';
import type { Scope } from '../../shared/scopes.js';
import type { Db } from '../db/client.js';
import type { Credential, SessionCredential } from './credentials.js';

/**
 * The spec's route groups (Authentication › Route groups) as checks on a verified credential.
 * Each returns what the route may act on, or throws the spec's 403 code.
 */

/** An organization's catalog, reached by an API key or by a member's session. */
export type OrganizationActor = { organizationId: string; credential: Credential };

/** A dashboard user acting in the session's current organization. */
export type MemberActor = { organizationId: string; userId: string; sessionId: string; role: Role };

/** Sellers, services, meters, plans, prices, signing secrets: API key with `scope`, or session. */
export async function authorizeCatalog(db: Db, credential: Credential, scope: Scope): Promise<OrganizationActor> {
  if (credential.kind === 'apiKey') return authorizeApiKey(credential, scope);
  const member = await authorizeMember(db, credential, 'member');
  return { organizationId: member.organizationId, credential };
}

/** Routes of a key-only group (usage, agentify): the key must carry `scope`. */
export function authorizeApiKey(credential: Credential, scope: Scope): OrganizationActor {
  if (credential.kind !== 'apiKey') throw new ApiError('auth_type_not_allowed', 'This route accepts API keys only.');
  if (!credential.scopes.includes(scope)) throw new ApiError('insufficient_scope', `This route needs the ${scope} scope.`);
  return { organizationId: credential.organizationId, credential };
}

/** API keys, organizations, users: a dashboard session only. */
export function authorizeSession(credential: Credential): SessionCredential {
  if (credential.kind !== 'session') throw new ApiError('auth_type_not_allowed', 'This route accepts dashboard sessions only.');
  return credential;
}

/**
 * A session acting in its current organization: it must have one (`organization_required`) and
 * still be a member of it with at least `role` (`organization_permission_required`).
 */
export async function authorizeMember(db: Db, session: SessionCredential, role: Role): Promise<MemberActor> {
  const organizationId = session.currentOrganizationId;
  if (!organizationId) throw new ApiError('organization_required');
  const membership = await db.membership.findUnique({ where: { organizationId_userId: { organizationId, userId: session.userId } } });
  if (!membership) throw new ApiError('organization_permission_required', 'You are no longer a member of this organization.');
  if (role === 'admin' && membership.role !== 'admin') {
    throw new ApiError('organization_permission_required', 'Only organization admins may do this.');
  }
  return { organizationId, userId: session.userId, sessionId: session.id, role: membership.role as Role };
}
