import { ApiError } from '../../../shared/errors.js';
import type { Db } from '../../db/client.js';

/** An organization always keeps an admin: without one nobody could manage its keys or members. */
export async function refuseRemovingLastAdmin(
  tx: Pick<Db, 'membership'>,
  organizationId: string,
  membership: { id: string; role: string },
) {
  if (membership.role !== 'admin') return;
  const otherAdmins = await tx.membership.count({ where: { organizationId, role: 'admin', id: { not: membership.id } } });
  if (otherAdmins === 0) throw new ApiError('last_admin');
}
