import { ApiError } from '../../../shared/errors.js';
import type { Db } from '../../db/client.js';

export async function ownedMembership(db: Db, organizationId: string, membershipId: string) {
  const membership = await db.membership.findFirst({ where: { id: membershipId, organizationId }, include: { user: true } });
  if (!membership) throw new ApiError('membership_not_found');
  return membership;
}
