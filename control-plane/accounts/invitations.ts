import { z } from 'zod';
import type { Invitation } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { idSchema } from '../../shared/schemas/fields.js';
import { invitation, type Role } from '../../shared/schemas/organizations.js';
import { hashToken, newToken } from '../../shared/tokens.js';
import type { ControlPlaneServices } from '../context.js';
import { enqueueMail } from '../mail/outbox.js';
import { router } from '../trpc/init.js';
import { adminProcedure, memberProcedure } from '../trpc/procedures.js';
import { acceptInvitation, viewInvitation } from './invitation-acceptance.js';

/**
 * People join an organization by invitation only: an admin names an email and a role, hub mails
 * that address a one-time link, and the person who opens it accepts (invitation-acceptance.ts).
 * Nobody chooses a password for someone else, and a person who already has an account joins only
 * by proving it is theirs, so no organization can make itself a way into another's account.
 */

/** How long an invitation's link works. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

/** The path of an invitation's link, under the control-plane's URL. */
export const invitationPath = (token: string) => `/v1/invitations/${token}`;

export function toInvitationWire(row: Invitation): z.infer<typeof invitation> {
  return {
    id: row.id,
    email: row.email,
    role: row.role as Role,
    name: row.name,
    invitedById: row.invitedById,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * Invites `email` into the organization, or invites it again: an address has one invitation per
 * organization, and a new one replaces its link (the old link stops working) and its expiry. The
 * invitation and its mail are written in one transaction. A member already is 409 `duplicate_member`.
 */
export async function invite(
  services: Pick<ControlPlaneServices, 'db' | 'mail' | 'config'>,
  input: { organizationId: string; email: string; role: Role; name: string | null; invitedBy: { id: string; email: string } },
): Promise<Invitation> {
  const { db } = services;
  const member = await db.membership.findFirst({ where: { organizationId: input.organizationId, user: { email: input.email } } });
  if (member) throw new ApiError('duplicate_member');
  const organization = await db.organization.findUniqueOrThrow({ where: { id: input.organizationId } });
  const token = newToken('invitation');
  const fields = {
    role: input.role,
    name: input.name,
    tokenHash: hashToken(token),
    expiresAt: new Date(Date.now() + INVITATION_LIFETIME_MS),
    invitedById: input.invitedBy.id,
    createdAt: new Date(),
  };
  const row = await db.$transaction(async (tx) => {
    const row = await tx.invitation.upsert({
      where: { organizationId_email: { organizationId: input.organizationId, email: input.email } },
      create: { id: newId('invitation'), organizationId: input.organizationId, email: input.email, ...fields },
      update: fields,
    });
    await enqueueMail(tx, {
      to: input.email,
      subject: `You are invited to ${organization.name} on hub`,
      text: invitationMailText({
        inviter: input.invitedBy.email,
        organizationName: organization.name,
        role: input.role,
        url: services.config.controlPlane.url + invitationPath(token),
      }),
    });
    return row;
  });
  services.mail.wake();
  return row;
}

/** What the invitation is and how to take it up; ignoring it is safe. Plain text, no tracking. */
function invitationMailText(m: { inviter: string; organizationName: string; role: Role; url: string }) {
  return [
    `${m.inviter} invited you to join the organization "${m.organizationName}" on hub, as ${m.role === 'admin' ? 'an admin' : 'a member'}.`,
    '',
    'This link shows the invitation; it works once, for 7 days:',
    '',
    `  ${m.url}`,
    '',
    'To accept, send a password to the link followed by /accept. If you have no hub account yet,',
    'the password you send becomes yours (at least 8 characters); if you have one, send its',
    'current password. With curl:',
    '',
    `  curl -X POST ${m.url}/accept -H 'content-type: application/json' -d '{"password":"…"}'`,
    '',
    'If you did not expect this mail, ignore it: nothing happens unless you accept.',
    '',
  ].join('\n');
}

/** The organization's invitations not yet accepted or revoked, expired ones included (their `expiresAt` says so). */
export const listInvitations = memberProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/organizations/current/invitations',
      tags: ['Organizations'],
      summary: 'Pending invitations of the current organization',
    },
  })
  .input(z.object({}))
  .output(z.object({ invitations: z.array(invitation) }))
  .query(async ({ ctx }) => {
    const rows = await ctx.db.invitation.findMany({
      where: { organizationId: ctx.member.organizationId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return { invitations: rows.map(toInvitationWire) };
  });

/** Revokes an invitation: its link answers `invitation_not_found` from now on. */
export const revokeInvitation = adminProcedure
  .meta({
    openapi: {
      method: 'DELETE',
      path: '/v1/organizations/current/invitations/{invitationId}',
      tags: ['Organizations'],
      summary: 'Revoke an invitation (admins only)',
    },
    successStatus: 204,
    errors: ['invitation_not_found'],
  })
  .input(z.object({ invitationId: idSchema('invitation') }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    const { count } = await ctx.db.invitation.deleteMany({ where: { id: input.invitationId, organizationId: ctx.member.organizationId } });
    if (count === 0) throw new ApiError('invitation_not_found');
  });

export const invitationsRouter = router({
  list: listInvitations,
  revoke: revokeInvitation,
  view: viewInvitation,
  accept: acceptInvitation,
});
