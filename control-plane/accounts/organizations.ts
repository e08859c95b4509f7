import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { idSchema } from '../../shared/schemas/fields.js';
import { organization, type Role } from '../../shared/schemas/organizations.js';
import { planRouter } from '../card-payments/plan.js';
import { router } from '../trpc/init.js';
import { memberProcedure, sessionProcedure } from '../trpc/procedures.js';
import { invitationsRouter } from './invitations.js';
import { membersRouter } from './members.js';

export const getCurrentOrganization = memberProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/organizations/current', tags: ['Organizations'], summary: "The session's current organization" },
  })
  .input(z.object({}))
  .output(z.object({ organization }))
  .query(async ({ ctx }) => {
    const found = await ctx.db.organization.findUniqueOrThrow({ where: { id: ctx.member.organizationId } });
    return { organization: { id: found.id, name: found.name, role: ctx.member.role, current: true } };
  });

/**
 * Switches the session to another organization of the user. One the user does not belong to is
 * `organization_not_found`, whether or not it exists.
 */
export const switchOrganization = sessionProcedure
  .meta({
    openapi: {
      method: 'PUT',
      path: '/v1/organizations/current',
      tags: ['Organizations'],
      summary: 'Switch the session to another organization',
    },
    errors: ['organization_not_found'],
  })
  .input(z.strictObject({ organizationId: idSchema('organization') }))
  .output(z.object({ organization }))
  .mutation(async ({ ctx, input }) => {
    const membership = await ctx.db.membership.findUnique({
      where: { organizationId_userId: { organizationId: input.organizationId, userId: ctx.session.userId } },
      include: { organization: true },
    });
    if (!membership) throw new ApiError('organization_not_found');
    await ctx.db.session.update({ where: { id: ctx.session.id }, data: { currentOrganizationId: membership.organizationId } });
    return {
      organization: { id: membership.organization.id, name: membership.organization.name, role: membership.role as Role, current: true },
    };
  });

/** Every organization the signed-in user belongs to, oldest membership first. */
export const listOrganizations = sessionProcedure
  .meta({ openapi: { method: 'GET', path: '/v1/organizations', tags: ['Organizations'], summary: "The signed-in user's organizations" } })
  .input(z.object({}))
  .output(z.object({ organizations: z.array(organization) }))
  .query(async ({ ctx }) => {
    const memberships = await ctx.db.membership.findMany({
      where: { userId: ctx.session.userId },
      include: { organization: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return {
      organizations: memberships.map((m) => ({
        id: m.organization.id,
        name: m.organization.name,
        role: m.role as Role,
        current: m.organizationId === ctx.session.currentOrganizationId,
      })),
    };
  });

export const organizationsRouter = router({
  list: listOrganizations,
  current: getCurrentOrganization,
  switch: switchOrganization,
  members: membersRouter,
  invitations: invitationsRouter,
  plan: planRouter,
});
