import type { Db } from '../../db/client.js';
import { newestFirst } from './wire.js';

/** The id of the secret hub signs a seller's traffic with: its newest active one. */
export async function signingSecretIdOf(db: Pick<Db, 'signingSecret'>, sellerId: string): Promise<string | undefined> {
  const newest = await db.signingSecret.findFirst({
    where: { sellerId, status: 'active' },
    orderBy: [...newestFirst],
    select: { id: true },
  });
  return newest?.id;
}
