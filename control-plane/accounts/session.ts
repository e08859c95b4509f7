import { z } from 'zod';
import type { User } from '../../generated/prisma/sqlite/client.js';
import { timestamp } from '../../shared/schemas/fields.js';
import { email, user } from '../../shared/schemas/organizations.js';
import { clientAddress } from '../auth/client-address.js';
import { createSession } from '../auth/credentials.js';
import { checkPassword } from '../auth/password-attempts.js';
import { clearSessionCookies, setSessionCookies } from '../auth/session-cookie.js';
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

export const signedInAnswer = z.object({
  sessionToken: z.string().meta({ description: 'Bearer token of the session (hubses_…)' }),
  expiresAt: timestamp,
  user,
  currentOrganizationId: z.string().nullable(),
});

/** Opens a session for `found`, in `organizationId`, as sign-in answers it. */
export async function signedIn(db: Db, found: User, organizationId: string | null): Promise<z.infer<typeof signedInAnswer>> {
  const { token, session } = await createSession(db, found.id, organizationId);
  return {
    sessionToken: token,
    expiresAt: session.expiresAt.toISOString(),
    user: { id: found.id, email: found.email, name: found.name },
    currentOrganizationId: session.currentOrganizationId,
  };
}

/**
 * Opens a dashboard session. Its current organization is the user's oldest membership; the
 * session lasts 30 days and ends early on sign-out. Wrong passwords are throttled per account and
 * per client address (auth/password-attempts.ts). The answer also sets the dashboard's session
 * cookies (auth/session-cookie.ts).
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
    errors: ['invalid_credentials', 'rate_limited'],
  })
  .input(z.strictObject({ email, password: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters') }))
  .output(signedInAnswer)
  .mutation(async ({ ctx, input }) => {
    const found = await checkPassword(ctx.db, ctx.provider, {
      email: input.email,
      address: clientAddress(ctx.req, ctx.config.proxy.trustProxy),
      password: input.password,
    });
    const first = await ctx.db.membership.findFirst({ where: { userId: found.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    const answer = await signedIn(ctx.db, found, first?.organizationId ?? null);
    // The dashboard keeps the session in cookies; API clients use the token and ignore them.
    setSessionCookies(ctx.res, answer.sessionToken, new Date(answer.expiresAt));
    return answer;
  });

/** Ends the calling session: its token is refused from now on, and the dashboard's cookies are cleared. */
export const signOut = sessionProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/auth/sign-out', tags: ['Dashboard sessions'], summary: 'End the calling session' },
    successStatus: 204,
  })
  .input(z.strictObject({}))
  .output(z.void())
  .mutation(async ({ ctx }) => {
    await ctx.db.session.updateMany({ where: { id: ctx.session.id, revokedAt: null }, data: { revokedAt: new Date() } });
    clearSessionCookies(ctx.res);
  });

export const sessionRouter = router({ signIn, signOut, me: getMe });
