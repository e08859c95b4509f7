import type { Scope } from '../../shared/scopes.js';
import { authorizeApiKey, authorizeCatalog, authorizeMember, authorizeSession } from '../auth/authorize.js';
import { authenticateRequest } from '../auth/request-credential.js';
import { apiProcedure } from './init.js';

/**
 * The procedure builders of the public API, one per route group of the spec. Each checks the
 * credential before the input is parsed (an anonymous caller learns nothing from validation) and
 * records who may call it in the route's metadata, for the OpenAPI document.
 */

/** No credential: sign-in. */
export const anonymousProcedure = apiProcedure.meta({ access: 'No credential.' });

/** Catalog reads: an API key with `admin:read`, or a member's dashboard session. */
export const catalogReadProcedure = catalogProcedure('admin:read');

/** Catalog writes: an API key with `admin:write`, or a member's dashboard session. */
export const catalogWriteProcedure = catalogProcedure('admin:write');

function catalogProcedure(scope: Scope) {
  return apiProcedure.meta({ access: `API key with ${scope}, or dashboard session.` }).use(async ({ ctx, next }) => {
    const credential = await authenticateRequest(ctx.db, ctx.req);
    const actor = await authorizeCatalog(ctx.db, credential, scope);
    return next({ ctx: { actor } });
  });
}

/** Key-only groups (usage, agentify): an API key with `scope`. */
export function apiKeyProcedure(scope: Scope) {
  return apiProcedure.meta({ access: `API key with ${scope}.` }).use(async ({ ctx, next }) => {
    const actor = authorizeApiKey(await authenticateRequest(ctx.db, ctx.req), scope);
    return next({ ctx: { actor } });
  });
}

/** A dashboard session, with or without a current organization (sign-out, organizations, users). */
export const sessionProcedure = apiProcedure.meta({ access: 'Dashboard session.' }).use(async ({ ctx, next }) => {
  const session = authorizeSession(await authenticateRequest(ctx.db, ctx.req));
  return next({ ctx: { session } });
});

/** A dashboard session acting in its current organization, as any member. */
export const memberProcedure = sessionProcedure.meta({ access: 'Dashboard session of a member.' }).use(async ({ ctx, next }) => {
  const member = await authorizeMember(ctx.db, ctx.session, 'member');
  return next({ ctx: { member } });
});

/** A dashboard session acting in its current organization, as an admin of it. */
export const adminProcedure = sessionProcedure
  .meta({ access: 'Dashboard session of an organization admin.' })
  .use(async ({ ctx, next }) => {
    const member = await authorizeMember(ctx.db, ctx.session, 'admin');
    return next({ ctx: { member } });
  });
