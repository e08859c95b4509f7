import { z } from 'zod';
import { sessionProcedure } from '../../trpc/procedures.js';

/** Ends the calling session: its token is refused from now on. */
export const signOut = sessionProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/auth/sign-out', tags: ['Dashboard sessions'], summary: 'End the calling session' },
    successStatus: 204,
  })
  .input(z.strictObject({}))
  .output(z.void())
  .mutation(async ({ ctx }) => {
    await ctx.db.session.updateMany({ where: { id: ctx.session.id, revokedAt: null }, data: { revokedAt: new Date() } });
  });
