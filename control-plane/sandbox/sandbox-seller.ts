import { ApiError } from '../../shared/errors.js';
import { ownedSeller } from '../catalog/guards.js';
import type { Db } from '../db/client.js';

/**
 * The sandbox routes act on sandbox sellers only: a live seller's accounts, payments and
 * deliveries are never moved, paid or refunded from here (docs/decisions.md#D-229).
 */
export async function ownedSandboxSeller(db: Db, organizationId: string, sellerId: string) {
  const seller = await ownedSeller(db, organizationId, sellerId);
  refuseLive(seller);
  return seller;
}

export function refuseLive(seller: { sandbox: boolean; slug: string }): void {
  if (!seller.sandbox)
    throw new ApiError('seller_not_in_sandbox', `${seller.slug} takes live traffic: create a seller with sandbox: true.`);
}
