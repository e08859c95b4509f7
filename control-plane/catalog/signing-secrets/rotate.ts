import { z } from 'zod';
import { sellerId } from '../../../shared/schemas/sellers.js';
import { createdSigningSecret } from '../../../shared/schemas/signing-secrets.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { ownedSeller } from '../owned.js';
import { issueSigningSecret } from './issue.js';

/** Replaces the seller's secrets in one step: a new one signs, every other active one retires. */
export const rotateSigningSecrets = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sellers/{sellerId}/signing-secrets/rotate',
      tags: ['Signing secrets'],
      summary: 'Rotate: create a new signing secret and retire all others',
    },
    successStatus: 201,
    errors: ['seller_not_found'],
  })
  .input(z.strictObject({ sellerId }))
  .output(createdSigningSecret)
  .mutation(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    return issueSigningSecret(ctx.db, ctx.masterKey, input.sellerId, { retireOthers: true });
  });
