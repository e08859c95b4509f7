import { z } from 'zod';
import { user } from '../../../shared/schemas/organizations.js';
import { sessionProcedure } from '../../trpc/procedures.js';

export const getMe = sessionProcedure
  .meta({ openapi: { method: 'GET', path: '/v1/users/me', tags: ['Users'], summary: 'The signed-in user' } })
  .input(z.object({}))
  .output(z.object({ user, currentOrganizationId: z.string().nullable() }))
  .query(async ({ ctx }) => {
    const found = await ctx.db.user.findUniqueOrThrow({ where: { id: ctx.session.userId } });
    return { user: { id: found.id, email: found.email, name: found.name }, currentOrganizationId: ctx.session.currentOrganizationId };
  });
