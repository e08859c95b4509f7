import { z } from 'zod';
import { organization, type Role } from '../../../shared/schemas/organizations.js';
import { sessionProcedure } from '../../trpc/procedures.js';

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
