import { z } from 'zod';
import { sellerId } from '../../../shared/schemas/sellers.js';
import { signingSecret, signingSecretId } from '../../../shared/schemas/signing-secrets.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedSigningSecret } from './owned-secret.js';
import { signingSecretIdOf } from './signing-id.js';
import { toSigningSecretWire } from './wire.js';

export const getSigningSecret = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/sellers/{sellerId}/signing-secrets/{signingSecretId}',
      tags: ['Signing secrets'],
      summary: 'Read a signing secret (never its value)',
    },
    errors: ['seller_not_found', 'signing_secret_not_found'],
  })
  .input(z.object({ sellerId, signingSecretId }))
  .output(z.object({ signingSecret }))
  .query(async ({ ctx, input }) => {
    const row = await ownedSigningSecret(ctx.db, ctx.actor.organizationId, input.sellerId, input.signingSecretId);
    return { signingSecret: toSigningSecretWire(row, await signingSecretIdOf(ctx.db, input.sellerId)) };
  });
