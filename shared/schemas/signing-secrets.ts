import { z } from 'zod';
import { idSchema, timestamp } from './fields.js';

export const SIGNING_SECRET_STATUSES = ['active', 'retired'] as const;

export const signingSecretId = idSchema('signingSecret');

export const signingSecret = z
  .object({
    id: signingSecretId.meta({ description: 'The kid of the signature header' }),
    sellerId: idSchema('seller'),
    status: z.enum(SIGNING_SECRET_STATUSES),
    signing: z.boolean().meta({ description: 'True for the one secret hub signs with: the newest active one' }),
    createdAt: timestamp,
    retiredAt: timestamp.nullable(),
  })
  .meta({ id: 'SigningSecret' });

/** A secret just made: the value is in this response and nowhere else, ever. */
export const createdSigningSecret = z.object({
  signingSecret,
  secret: z.string().meta({ description: 'The HMAC key (hubsk_…), shown once' }),
});
