import { z } from 'zod';
import { newId } from '../../../shared/ids.js';
import { email, member, newPassword, ROLES } from '../../../shared/schemas/organizations.js';
import { adminProcedure } from '../../trpc/procedures.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { hashPassword } from '../password.js';
import { toMemberWire } from './wire.js';

/**
 * Adds a user to the current organization by email. A user hub does not know yet is created,
 * with `password` as the first password when given (without one, they cannot sign in until an
 * operator sets one with `hub bootstrap`). An existing user's password is never changed here.
 */
export const addMember = adminProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/organizations/current/members', tags: ['Organizations'], summary: 'Add a member (admins only)' },
    successStatus: 201,
    errors: ['duplicate_member'],
  })
  .input(
    z.strictObject({ email, role: z.enum(ROLES), name: z.string().trim().min(1).max(200).optional(), password: newPassword.optional() }),
  )
  .output(z.object({ member }))
  .mutation(async ({ ctx, input }) => {
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    const row = await withUniqueCodes({ Membership: 'duplicate_member' }, () =>
      ctx.db.$transaction(async (tx) => {
        const existing = await tx.user.findUnique({ where: { email: input.email } });
        const user =
          existing ?? (await tx.user.create({ data: { id: newId('user'), email: input.email, name: input.name ?? null, passwordHash } }));
        return tx.membership.create({
          data: { id: newId('membership'), organizationId: ctx.member.organizationId, userId: user.id, role: input.role },
          include: { user: true },
        });
      }),
    );
    return { member: toMemberWire(row) };
  });
