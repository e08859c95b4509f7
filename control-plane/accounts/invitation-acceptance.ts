import { z } from 'zod';
import type { User } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { name } from '../../shared/schemas/fields.js';
import { invitationView, newPassword, type Role } from '../../shared/schemas/organizations.js';
import { hashToken } from '../../shared/tokens.js';
import { clientAddress } from '../auth/client-address.js';
import { hashPassword } from '../auth/password.js';
import { checkPassword } from '../auth/password-attempts.js';
import type { RequestContext } from '../context.js';
import type { Db } from '../db/client.js';
import { withUniqueCodes } from '../db/constraints.js';
import { anonymousProcedure } from '../trpc/procedures.js';
import { signedIn, signedInAnswer } from './session.js';

/**
 * The invitee's side of an invitation, reached with the mailed link's token and no other
 * credential. A person without an account chooses their password here (the link proves the
 * mailbox is theirs); a person with one gives its current password, throttled as sign-in is, and
 * that password is never changed here. Accepting uses the link up, makes the membership and
 * signs the person in to the organization.
 */

const token = z.string().min(1).max(200).meta({ description: 'The token of the mailed link (hubinv_…)' });

/** The invitation of `token`: unknown, revoked, replaced or used is 404; past its expiry, 410. */
async function openInvitation(db: Db, value: string) {
  const found = await db.invitation.findUnique({ where: { tokenHash: hashToken(value) }, include: { organization: true } });
  if (!found) throw new ApiError('invitation_not_found');
  if (found.expiresAt.getTime() <= Date.now()) throw new ApiError('invitation_expired');
  return found;
}

/** An account the invitee must prove is theirs: one with a password. */
const hasPassword = (user: User | null): user is User & { passwordHash: string } => Boolean(user?.passwordHash);

export const viewInvitation = anonymousProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/invitations/{token}',
      tags: ['Invitations'],
      summary: 'The invitation a mailed link stands for',
      protect: false,
    },
    errors: ['invitation_not_found', 'invitation_expired'],
  })
  .input(z.object({ token }))
  .output(z.object({ invitation: invitationView }))
  .query(async ({ ctx, input }) => {
    const found = await openInvitation(ctx.db, input.token);
    const user = await ctx.db.user.findUnique({ where: { email: found.email } });
    return {
      invitation: {
        organizationName: found.organization.name,
        email: found.email,
        role: found.role as Role,
        expiresAt: found.expiresAt.toISOString(),
        existingAccount: hasPassword(user),
      },
    };
  });

export const acceptInvitation = anonymousProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/invitations/{token}/accept',
      tags: ['Invitations'],
      summary: 'Accept an invitation: join the organization and sign in',
      protect: false,
    },
    errors: ['invitation_not_found', 'invitation_expired', 'invalid_credentials', 'rate_limited', 'duplicate_member'],
  })
  .input(
    z.strictObject({
      token,
      password: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').meta({
        description: 'With an account already: its current password. Without one: the password it will have (at least 8 characters).',
      }),
      name: name.optional().meta({ description: 'A new account’s name (the inviter’s suggestion otherwise)' }),
    }),
  )
  .output(signedInAnswer)
  .mutation(async ({ ctx, input }) => {
    const found = await openInvitation(ctx.db, input.token);
    const joiner = await accountFor(ctx, found, input);
    // Two invitations of one new address accepted at once: the first makes the account, the
    // second meets it and is refused as a wrong password would be (its invitation stays open,
    // to be accepted with the account's password).
    const member = await withUniqueCodes({ Membership: 'duplicate_member', User: 'invalid_credentials' }, () =>
      ctx.db.$transaction(async (tx) => {
        // Conditional on the link being unused, so a double submit joins once.
        const used = await tx.invitation.deleteMany({ where: { id: found.id, tokenHash: found.tokenHash } });
        if (used.count !== 1) throw new ApiError('invitation_not_found');
        const member = await joiner(tx);
        await tx.membership.create({
          data: { id: newId('membership'), organizationId: found.organizationId, userId: member.id, role: found.role },
        });
        return member;
      }),
    );
    return signedIn(ctx.db, member, found.organizationId);
  });

/**
 * Who accepts, as a step of the accepting transaction: the account of the invited email once its
 * password checked out; else the account to create, or the password to give the one `hub
 * bootstrap` made without any.
 */
async function accountFor(
  ctx: RequestContext,
  found: { email: string; name: string | null },
  input: { password: string; name?: string | undefined },
): Promise<(tx: Pick<Db, 'user'>) => Promise<User>> {
  const user = await ctx.db.user.findUnique({ where: { email: found.email } });
  if (hasPassword(user)) {
    const address = clientAddress(ctx.req, ctx.config.proxy.trustProxy);
    const proven = await checkPassword(ctx.db, ctx.provider, { email: found.email, address, password: input.password });
    return async () => proven;
  }
  const chosen = newPassword.safeParse(input.password);
  if (!chosen.success) throw ApiError.validation(`password: ${chosen.error.issues[0]!.message}`);
  const passwordHash = await hashPassword(chosen.data);
  if (!user) {
    return (tx) => tx.user.create({ data: { id: newId('user'), email: found.email, name: input.name ?? found.name, passwordHash } });
  }
  return async (tx) => {
    // Only while it still has none: two invitations accepted at once set it once.
    const set = await tx.user.updateMany({ where: { id: user.id, passwordHash: null }, data: { passwordHash } });
    if (set.count !== 1) throw new ApiError('invalid_credentials');
    return { ...user, passwordHash };
  };
}
