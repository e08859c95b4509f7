import { ApiError } from '../../shared/errors.js';
import type { Db } from '../db/client.js';

type AccessFilter = NonNullable<Parameters<Db['access']['count']>[0]>['where'];

/**
 * Plans that buyers hold accounts on cannot go: the accounts are paid obligations that point at
 * them. Deleting them is refused with `resource_in_use` (409) instead.
 */
export async function refuseWhileBuyersHoldPlans(tx: Pick<Db, 'access'>, where: AccessFilter): Promise<void> {
  const accounts = await tx.access.count({ where });
  if (accounts) throw new ApiError('resource_in_use', `Buyers hold ${accounts} account(s) on plans this would delete.`);
}
