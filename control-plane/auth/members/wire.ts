import type { z } from 'zod';
import type { Membership, User } from '../../../generated/prisma/sqlite/client.js';
import type { member, Role } from '../../../shared/schemas/organizations.js';

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
