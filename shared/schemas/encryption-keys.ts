import { z } from 'zod';
import { idSchema, timestamp } from './fields.js';

export const ENCRYPTION_KEY_STATUSES = ['active', 'retired'] as const;

export const encryptionKeyId = idSchema('encryptionKey');

export const publicJwk = z
  .object({
    kty: z.literal('EC'),
    crv: z.literal('P-256'),
    x: z.string(),
    y: z.string(),
    kid: encryptionKeyId,
    use: z.literal('enc'),
    alg: z.literal('ECDH-ES'),
  })
  .meta({ id: 'PublicEncryptionJwk', description: 'The public half, as the pay URL’s JWKS publishes it' });

export const encryptionKey = z
  .object({
    id: encryptionKeyId.meta({ description: 'The kid agents name in a JWE’s protected header' }),
    sellerId: idSchema('seller'),
    status: z.enum(ENCRYPTION_KEY_STATUSES),
    publicJwk,
    createdAt: timestamp,
    retiredAt: timestamp.nullable(),
  })
  .meta({ id: 'EncryptionKey' });
