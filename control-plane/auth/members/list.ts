import { z } from 'zod';
import { member } from '../../../shared/schemas/organizations.js';
import { memberProcedure } from '../../trpc/procedures.js';
import { toMemberWire } from './wire.js';

export const listMembers = memberProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/organizations/current/members',
      tags: ['Organizations'],
      summary: 'Members of the current organization',
    },
  })
  .input(z.object({}))
  .output(z.object({ members: z.array(member) }))
  .query(async ({ ctx }) => {
    const rows = await ctx.db.membership.findMany({
      where: { organizationId: ctx.member.organizationId },
      include: { user: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return { members: rows.map(toMemberWire) };
  });
