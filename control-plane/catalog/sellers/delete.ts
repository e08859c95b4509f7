import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { sellerId } from '../../../shared/schemas/sellers.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { refuseWhileBuyersHoldPlans } from '../in-use.js';
import { ownedSeller } from '../owned.js';

/**
 * Deletes a seller with its whole catalog (hostnames, signing secrets, services, meters, plans,
 * prices). A seller that buyers hold accounts with, or that has taken payments, is refused: those
 * are obligations and history, not catalog.
 */
export const deleteSeller = catalogWriteProcedure
  .meta({
    openapi: { method: 'DELETE', path: '/v1/sellers/{sellerId}', tags: ['Sellers'], summary: 'Delete a seller and its catalog' },
    successStatus: 204,
    errors: ['seller_not_found', 'resource_in_use'],
  })
  .input(z.object({ sellerId }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    await ctx.db.$transaction(async (tx) => {
      await refuseWhileBuyersHoldPlans(tx, { sellerId: input.sellerId });
      if (await tx.paymentAttempt.count({ where: { sellerId: input.sellerId } })) {
        throw new ApiError('resource_in_use', 'The seller has payment history; it cannot be deleted.');
      }
      await tx.seller.delete({ where: { id: input.sellerId } });
    });
  });
