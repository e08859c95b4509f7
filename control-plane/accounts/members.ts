import { z } from 'zod';
import type { Membership, User } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { idSchema } from '../../shared/schemas/fields.js';
import { email, member, newPassword, ROLES, type Role } from '../../shared/schemas/organizations.js';
import { hashPassword } from '../auth/password.js';
import type { Db } from '../db/client.js';
import { withUniqueCodes } from '../db/constraints.js';
import { router } from '../trpc/init.js';
import { adminProcedure, memberProcedure } from '../trpc/procedures.js';

export function toMemberWire(row: Membership & { user: User }): z.infer<typeof member> {
  return {
    id: row.id,
    userId: row.userId,
    email: row.user.email,
    name: row.user.name,
    role: row.role as Role,
    createdAt: row.createdAt.toISOString(),
  };
}

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

/**
 * An organization always keeps an admin: without one nobody could manage its keys or members.
 * Changes to its admins take turns on the organization's row: two admins removing each other at
 * once would each count the other, both still there, and leave none (PostgreSQL's reads do not
 * wait for writes; SQLite runs one write at a time anyway). The membership is read again after.
 */
export async function refuseRemovingLastAdmin(tx: Pick<Db, 'membership' | 'organization'>, organizationId: string, membershipId: string) {
  await tx.organization.update({ where: { id: organizationId }, data: { updatedAt: new Date() } });
  const membership = await tx.membership.findFirst({ where: { id: membershipId, organizationId } });
  if (!membership) throw new ApiError('membership_not_found');
  if (membership.role !== 'admin') return;
  const otherAdmins = await tx.membership.count({ where: { organizationId, role: 'admin', id: { not: membership.id } } });
  if (otherAdmins === 0) throw new ApiError('last_admin');
}

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

export async function ownedMembership(db: Db, organizationId: string, membershipId: string) {
  const membership = await db.membership.findFirst({ where: { id: membershipId, organizationId }, include: { user: true } });
  if (!membership) throw new ApiError('membership_not_found');
  return membership;
}

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
      await refuseRemovingLastAdmin(tx, existing.organizationId, existing.id);
      await tx.membership.delete({ where: { id: existing.id } });
    });
  });

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
      if (input.role !== 'admin') await refuseRemovingLastAdmin(tx, existing.organizationId, existing.id);
      return tx.membership.update({ where: { id: existing.id }, data: { role: input.role }, include: { user: true } });
    });
    return { member: toMemberWire(row) };
  });

export const membersRouter = router({ list: listMembers, add: addMember, update: updateMember, remove: removeMember });
