import { z } from 'zod';
import { sellerId } from '../../../shared/schemas/sellers.js';
import { signingSecret } from '../../../shared/schemas/signing-secrets.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedSeller } from '../owned.js';
import { newestFirst, toSigningSecretWire } from './wire.js';

/** Every secret of the seller, active and retired, newest first. Values are never shown again. */
export const listSigningSecrets = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/sellers/{sellerId}/signing-secrets',
      tags: ['Signing secrets'],
      summary: "List a seller's signing secrets",
    },
    errors: ['seller_not_found'],
  })
  .input(z.object({ sellerId }))
  .output(z.object({ signingSecrets: z.array(signingSecret) }))
  .query(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const rows = await ctx.db.signingSecret.findMany({ where: { sellerId: input.sellerId }, orderBy: [...newestFirst] });
    const signingId = rows.find((row) => row.status === 'active')?.id;
    return { signingSecrets: rows.map((row) => toSigningSecretWire(row, signingId)) };
  });
