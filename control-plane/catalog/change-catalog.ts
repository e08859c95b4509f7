import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { Db } from '../db/client.js';
import { touchSeller } from './touch-seller.js';

/**
 * Runs a write to a seller's catalog in one transaction that also marks the seller changed, so a
 * proxy polling for changed sellers never misses it (touch-seller.ts).
 */
export function changeCatalog<T>(db: Db, sellerId: string, write: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return db.$transaction(async (tx) => {
    const result = await write(tx);
    await touchSeller(tx, sellerId);
    return result;
  });
}
