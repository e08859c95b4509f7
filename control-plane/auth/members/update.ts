import { z } from 'zod';
import { idSchema } from '../../../shared/schemas/fields.js';
import { member, ROLES } from '../../../shared/schemas/organizations.js';
import { adminProcedure } from '../../trpc/procedures.js';
import { refuseRemovingLastAdmin } from './last-admin.js';
import { ownedMembership } from './owned-membership.js';
import { toMemberWire } from './wire.js';

export const updateMember = adminProcedure
  .meta({
    openapi: {
      method: 'PATCH',
      path: '/v1/organizations/current/members/{membershipId}',
      tags: ['Organizations'],
      summary: "Change a member's role (admins only)",
    },
    errors: ['membership_not_found', 'last_admin'],
  })
  .input(z.strictObject({ membershipId: idSchema('membership'), role: z.enum(ROLES) }))
  .output(z.object({ member }))
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedMembership(ctx.db, ctx.member.organizationId, input.membershipId);
    const row = await ctx.db.$transaction(async (tx) => {
      if (input.role !== 'admin') await refuseRemovingLastAdmin(tx, existing.organizationId, existing);
      return tx.membership.update({ where: { id: existing.id }, data: { role: input.role }, include: { user: true } });
    });
    return { member: toMemberWire(row) };
  });
