import type { z } from 'zod';
import type { SigningSecret } from '../../../generated/prisma/sqlite/client.js';
import type { signingSecret } from '../../../shared/schemas/signing-secrets.js';

/** Newest first: the order in which hub picks the secret it signs with. */
export const newestFirst = [{ createdAt: 'desc' }, { id: 'desc' }] as const;

/** `signingId` is the id of the secret hub signs with (the newest active one), if any. */
export function toSigningSecretWire(row: SigningSecret, signingId: string | undefined): z.infer<typeof signingSecret> {
  return {
    id: row.id,
    sellerId: row.sellerId,
    status: row.status as 'active' | 'retired',
    signing: row.id === signingId,
    createdAt: row.createdAt.toISOString(),
    retiredAt: row.retiredAt ? row.retiredAt.toISOString() : null,
  };
}
