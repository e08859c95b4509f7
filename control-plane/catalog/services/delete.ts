import { z } from 'zod';
import { serviceId } from '../../../shared/schemas/services.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { refuseWhileBuyersHoldPlans } from '../in-use.js';
import { ownedService } from '../owned.js';

/** Deletes a service with its meters, plans and prices, unless buyers hold accounts on its plans. */
export const deleteService = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'DELETE',
      path: '/v1/services/{serviceId}',
      tags: ['Services'],
      summary: 'Delete a service with its meters, plans and prices',
    },
    successStatus: 204,
    errors: ['service_not_found', 'resource_in_use'],
  })
  .input(z.object({ serviceId }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedService(ctx.db, ctx.actor.organizationId, input.serviceId);
    await changeCatalog(ctx.db, existing.sellerId, async (tx) => {
      await refuseWhileBuyersHoldPlans(tx, { plan: { serviceId: existing.id } });
      await tx.service.delete({ where: { id: existing.id } });
    });
  });
