import { z } from 'zod';
import { idSchema } from '../../../shared/schemas/fields.js';
import { adminProcedure } from '../../trpc/procedures.js';
import { refuseRemovingLastAdmin } from './last-admin.js';
import { ownedMembership } from './owned-membership.js';

/**
 * Removes a member. Their sessions stay signed in but get `organization_permission_required` in
 * this organization from the next request on. API keys belong to the organization and stay.
 */
export const removeMember = adminProcedure
  .meta({
    openapi: {
      method: 'DELETE',
      path: '/v1/organizations/current/members/{membershipId}',
      tags: ['Organizations'],
      summary: 'Remove a member (admins only)',
    },
    successStatus: 204,
    errors: ['membership_not_found', 'last_admin'],
  })
  .input(z.object({ membershipId: idSchema('membership') }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedMembership(ctx.db, ctx.member.organizationId, input.membershipId);
    await ctx.db.$transaction(async (tx) => {
      await refuseRemovingLastAdmin(tx, existing.organizationId, existing);
      await tx.membership.delete({ where: { id: existing.id } });
    });
  });
