import { ApiError } from '../../../shared/errors.js';
import type { Db } from '../../db/client.js';
import { ownedSeller } from '../owned.js';

/** A signing secret of a seller of the organization, or `seller_not_found` / `signing_secret_not_found`. */
export async function ownedSigningSecret(db: Db, organizationId: string, sellerId: string, secretId: string) {
  await ownedSeller(db, organizationId, sellerId);
  const secret = await db.signingSecret.findFirst({ where: { id: secretId, sellerId } });
  if (!secret) throw new ApiError('signing_secret_not_found');
  return secret;
}
