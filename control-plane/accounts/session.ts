import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { timestamp } from '../../shared/schemas/fields.js';
import { email, user } from '../../shared/schemas/organizations.js';
import { createSession } from '../auth/credentials.js';
import { hashPassword, verifyPassword } from '../auth/password.js';
import type { Db } from '../db/client.js';
import { router } from '../trpc/init.js';
import { anonymousProcedure, sessionProcedure } from '../trpc/procedures.js';

export const getMe = sessionProcedure
  .meta({ openapi: { method: 'GET', path: '/v1/users/me', tags: ['Users'], summary: 'The signed-in user' } })
  .input(z.object({}))
  .output(z.object({ user, currentOrganizationId: z.string().nullable() }))
  .query(async ({ ctx }) => {
    const found = await ctx.db.user.findUniqueOrThrow({ where: { id: ctx.session.userId } });
    return { user: { id: found.id, email: found.email, name: found.name }, currentOrganizationId: ctx.session.currentOrganizationId };
  });

/**
 * A password hash nobody knows, checked when the email is unknown, so that a wrong email takes
 * as long as a wrong password and sign-in does not reveal which emails have accounts.
 */
let decoyHash: Promise<string> | undefined;
const decoy = () => (decoyHash ??= hashPassword(randomBytes(16).toString('hex')));

async function checkPassword(db: Db, address: string, password: string) {
  const found = await db.user.findUnique({ where: { email: address } });
  const ok = await verifyPassword(password, found?.passwordHash ?? (await decoy()));
  if (!found?.passwordHash || !ok) throw new ApiError('invalid_credentials');
  return found;
}

/**
 * Opens a dashboard session. Its current organization is the user's oldest membership; the
 * session lasts 30 days and ends early on sign-out.
 */
export const signIn = anonymousProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/auth/sign-in',
      tags: ['Dashboard sessions'],
      summary: 'Sign in with email and password',
      protect: false,
    },
    errors: ['invalid_credentials'],
  })
  .input(z.strictObject({ email, password: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters') }))
  .output(
    z.object({
      sessionToken: z.string().meta({ description: 'Bearer token of the session (hubses_…)' }),
      expiresAt: timestamp,
      user,
      currentOrganizationId: z.string().nullable(),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    const found = await checkPassword(ctx.db, input.email, input.password);
    const first = await ctx.db.membership.findFirst({ where: { userId: found.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    const { token, session } = await createSession(ctx.db, found.id, first?.organizationId ?? null);
    return {
      sessionToken: token,
      expiresAt: session.expiresAt.toISOString(),
      user: { id: found.id, email: found.email, name: found.name },
      currentOrganizationId: session.currentOrganizationId,
    };
  });

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

export const sessionRouter = router({ signIn, signOut, me: getMe });
