import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import type { ManagementWorld } from './management.js';

/**
 * The spec's route groups (Authentication › Route groups), as hub's routes fall into them:
 * catalog routes take an API key with admin:read / admin:write or a session; session routes
 * take a session only, some of them in a current organization, as a member or as an admin;
 * `api-key` routes (usage, page views, agentify) take an API key only, with their own scope,
 * which the `usageKey` credential holds for each of them.
 */
export type RouteGroup = 'anonymous' | 'catalog-read' | 'catalog-write' | 'api-key' | 'session' | 'member' | 'admin';

export type Probe = { path: string; body?: unknown; expect: { status: number; error?: string } };

export type RouteCase = {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The route as the OpenAPI document names it. */
  route: string;
  group: RouteGroup;
  /**
   * A request that gets past the credential checks and changes nothing: for a route that takes
   * an id, organization b's id (the cross-organization 404); otherwise a harmless read or a body
   * that fails validation.
   */
  probe: (world: ManagementWorld) => Probe;
};

type Expected = { status: number; error?: string };

const unauthenticated: Expected = { status: 401, error: 'missing_bearer_token' };
const invalid: Expected = { status: 401, error: 'invalid_token' };
const insufficientScope: Expected = { status: 403, error: 'insufficient_scope' };
const wrongType: Expected = { status: 403, error: 'auth_type_not_allowed' };
const noOrganization: Expected = { status: 403, error: 'organization_required' };
const notPermitted: Expected = { status: 403, error: 'organization_permission_required' };

/** Which credential gets what on a route of each group; `accepted` stands for the probe's answer. */
function expectations(world: ManagementWorld, group: RouteGroup, accepted: Expected): [string, string | undefined, Expected][] {
  const c = world.credentials;
  const broken: [string, string | undefined, Expected][] = [
    ['no bearer token', undefined, unauthenticated],
    ['a token that is not hub’s', 'not-a-hub-token', invalid],
    ['an unknown API key', `hub_${randomBytes(20).toString('hex')}`, invalid],
    ['an unknown session token', `hubses_${randomBytes(20).toString('hex')}`, invalid],
    ['a revoked API key', c.revokedKey, invalid],
    ['an expired session', c.expiredSession, invalid],
    ['a signed-out session', c.signedOutSession, invalid],
  ];
  const sessionsInOrganization: [string, string | undefined, Expected][] = [
    ['a session without a current organization', c.noOrganizationSession, noOrganization],
    ['a session of a removed member', c.formerMemberSession, notPermitted],
  ];
  /** A catalog route: the key with its scope or any member's session passes; other keys lack a scope. */
  const catalog = (withScope: [string, string], otherScope: [string, string]): [string, string | undefined, Expected][] => [
    [...withScope, accepted],
    [...otherScope, insufficientScope],
    ['an API key without admin scopes', c.usageKey, insufficientScope],
    ['an admin session', c.adminSession, accepted],
    ['a member session', c.memberSession, accepted],
    ...sessionsInOrganization,
  ];
  switch (group) {
    case 'anonymous':
      return [['no bearer token', undefined, accepted]];
    case 'catalog-read':
      return [...broken, ...catalog(['an API key with admin:read', c.readKey], ['an API key with admin:write only', c.writeKey])];
    case 'catalog-write':
      return [...broken, ...catalog(['an API key with admin:write', c.writeKey], ['an API key with admin:read only', c.readKey])];
    case 'api-key':
      return [
        ...broken,
        ['an API key with the route’s scope', c.usageKey, accepted],
        ['an API key with admin scopes only', c.allAdminKey, insufficientScope],
        ['an admin session', c.adminSession, wrongType],
      ];
    case 'session':
      return [
        ...broken,
        ['an API key with every scope', c.allScopesKey, wrongType],
        ['an admin session', c.adminSession, accepted],
        ['a session without a current organization', c.noOrganizationSession, accepted],
      ];
    case 'member':
      return [
        ...broken,
        ['an API key with every scope', c.allScopesKey, wrongType],
        ['an admin session', c.adminSession, accepted],
        ['a member session', c.memberSession, accepted],
        ...sessionsInOrganization,
      ];
    case 'admin':
      return [
        ...broken,
        ['an API key with every scope', c.allScopesKey, wrongType],
        ['an admin session', c.adminSession, accepted],
        ['a member session', c.memberSession, notPermitted],
        ...sessionsInOrganization,
      ];
  }
}

/**
 * Generates the credential cases of every route: missing token, invalid tokens, the wrong kind of
 * credential, missing scopes, sessions without (or no longer in) an organization, and, through
 * the probe, access to another organization's resources. Each must answer exactly as the spec's
 * tables say.
 */
export async function checkRouteGroups(t: Test, world: ManagementWorld, routes: readonly RouteCase[]): Promise<void> {
  for (const route of routes) {
    await t.test(`${route.method} ${route.route} (${route.group})`, async (t) => {
      const probe = route.probe(world);
      for (const [label, token, expected] of expectations(world, route.group, probe.expect)) {
        const reply = await world.api.call(route.method, probe.path, { token, body: probe.body });
        t.equal(reply.status, expected.status, `${label}: status`);
        if (expected.error !== undefined) t.equal(reply.body?.error, expected.error, `${label}: error code`);
      }
    });
  }
}
