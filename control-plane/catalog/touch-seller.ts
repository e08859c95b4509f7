import type { Db } from '../db/client.js';

type Tx = Pick<Db, 'seller'>;

/**
 * Marks a seller's catalog as changed. Proxies cache what they need per seller and poll for
 * sellers changed since their last look (`internal.sellersChangedSince`), so every write that
 * touches a seller, its hostnames, secrets, services, meters, plans or prices must call this,
 * inside the same transaction when there is one.
 */
export async function touchSeller(db: Tx, sellerId: string): Promise<void> {
  await db.seller.updateMany({ where: { id: sellerId }, data: { updatedAt: new Date() } });
}
