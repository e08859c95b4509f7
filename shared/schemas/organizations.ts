import { z } from 'zod';
import { idSchema, timestamp } from './fields.js';

/** Dashboard users, their organizations and memberships. */

export const ROLES = ['admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const email = z
  .string()
  .trim()
  .max(320, 'must be at most 320 characters')
  .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be an email address')
  .transform((value) => value.toLowerCase());

/** Sign-in checks passwords against the stored hash; new ones must be at least 8 characters. */
export const newPassword = z.string().min(8, 'must be at least 8 characters').max(200, 'must be at most 200 characters');

export const user = z.object({ id: idSchema('user'), email: z.string(), name: z.string().nullable() }).meta({ id: 'User' });

export const organization = z
  .object({
    id: idSchema('organization'),
    name: z.string(),
    role: z.enum(ROLES).meta({ description: "The caller's role in it" }),
    current: z.boolean().meta({ description: "True for the session's current organization" }),
  })
  .meta({ id: 'Organization' });

export const member = z
  .object({
    id: idSchema('membership'),
    userId: idSchema('user'),
    email: z.string(),
    name: z.string().nullable(),
    role: z.enum(ROLES),
    createdAt: timestamp,
  })
  .meta({ id: 'Member' });

/** A pending invitation, as its organization's members see it (never its link). */
export const invitation = z
  .object({
    id: idSchema('invitation'),
    email: z.string(),
    role: z.enum(ROLES),
    name: z.string().nullable(),
    invitedById: idSchema('user').nullable(),
    expiresAt: timestamp,
    createdAt: timestamp,
  })
  .meta({ id: 'Invitation' });

/** An invitation as the person holding its link sees it, to decide and to know which password to give. */
export const invitationView = z
  .object({
    organizationName: z.string(),
    email: z.string(),
    role: z.enum(ROLES),
    expiresAt: timestamp,
    existingAccount: z.boolean().meta({
      description: 'True: accept with the current password of this account. False: the password given becomes the new account’s.',
    }),
  })
  .meta({ id: 'InvitationView' });
