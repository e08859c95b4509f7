import type { z } from 'zod';
import { newId } from '../../../shared/ids.js';
import type { createdSigningSecret } from '../../../shared/schemas/signing-secrets.js';
import { sealSecret } from '../../../shared/secret-box.js';
import { newToken } from '../../../shared/tokens.js';
import type { Db } from '../../db/client.js';
import { changeCatalog } from '../change-catalog.js';
import { toSigningSecretWire } from './wire.js';

/**
 * Makes a new active signing secret for a seller, optionally retiring every other active one in
 * the same transaction (a rotation). The value is sealed under the master key at rest and
 * returned here once; being the newest active secret, it is the one hub signs with now.
 */
export async function issueSigningSecret(
  db: Db,
  masterKey: Buffer,
  sellerId: string,
  options: { retireOthers: boolean },
): Promise<z.infer<typeof createdSigningSecret>> {
  const secret = newToken('signingSecret');
  const row = await changeCatalog(db, sellerId, async (tx) => {
    if (options.retireOthers) {
      await tx.signingSecret.updateMany({ where: { sellerId, status: 'active' }, data: { status: 'retired', retiredAt: new Date() } });
    }
    return tx.signingSecret.create({
      data: { id: newId('signingSecret'), sellerId, encryptedSecret: sealSecret(masterKey, secret), status: 'active' },
    });
  });
  return { signingSecret: toSigningSecretWire(row, row.id), secret };
}
