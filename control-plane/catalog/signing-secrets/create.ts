import { z } from 'zod';
import { sellerId } from '../../../shared/schemas/sellers.js';
import { createdSigningSecret } from '../../../shared/schemas/signing-secrets.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { ownedSeller } from '../owned.js';
import { issueSigningSecret } from './issue.js';

/**
 * Adds a secret beside the active ones; it signs from now on, and the older ones stay active
 * until retired, so a seller's verifier may accept both during a hand-over.
 */
export const createSigningSecret = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/v1/sellers/{sellerId}/signing-secrets',
      tags: ['Signing secrets'],
      summary: 'Create a signing secret (value shown once)',
    },
    successStatus: 201,
    errors: ['seller_not_found'],
  })
  .input(z.strictObject({ sellerId }))
  .output(createdSigningSecret)
  .mutation(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    return issueSigningSecret(ctx.db, ctx.masterKey, input.sellerId, { retireOthers: false });
  });
