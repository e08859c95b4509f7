import { z } from 'zod';
import type { Membership, User } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { idSchema, name } from '../../shared/schemas/fields.js';
import { email, invitation, member, ROLES, type Role } from '../../shared/schemas/organizations.js';
import type { Db } from '../db/client.js';
import { router } from '../trpc/init.js';
import { adminProcedure, memberProcedure } from '../trpc/procedures.js';
import { invite, toInvitationWire } from './invitations.js';

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
 * Adds a member: invites the email into the current organization (invitations.ts). The person
 * joins on accepting the mailed link, with a password of their own; a body carrying `password`
 * is refused, since nobody chooses another person's password.
 */
export const addMember = adminProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/organizations/current/members',
      tags: ['Organizations'],
      summary: 'Invite a member: mails the address a link to join (admins only)',
    },
    successStatus: 201,
    errors: ['duplicate_member', 'invalid_request'],
  })
  .input(
    z.strictObject({
      email,
      role: z.enum(ROLES),
      name: name.optional(),
      password: z.unknown().optional().meta({ description: 'Refused (400 invalid_request): members choose their own password' }),
    }),
  )
  .output(z.object({ invitation }))
  .mutation(async ({ ctx, input }) => {
    if (input.password !== undefined) {
      throw new ApiError('invalid_request', 'Members choose their own password: hub mails them an invitation. Send no password.');
    }
    const inviter = await ctx.db.user.findUniqueOrThrow({ where: { id: ctx.member.userId } });
    const row = await invite(ctx, {
      organizationId: ctx.member.organizationId,
      email: input.email,
      role: input.role,
      name: input.name ?? null,
      invitedBy: { id: inviter.id, email: inviter.email },
    });
    return { invitation: toInvitationWire(row) };
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
