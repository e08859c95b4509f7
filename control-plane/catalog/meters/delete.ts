import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { meterId } from '../../../shared/schemas/meters.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedMeter } from '../owned.js';

/**
 * Deletes a meter that no plan prices. A priced meter is refused (409 `resource_in_use`): taking
 * it away would silently change what plans charge, so its prices are deleted first, on purpose.
 */
export const deleteMeter = catalogWriteProcedure
  .meta({
    openapi: { method: 'DELETE', path: '/v1/meters/{meterId}', tags: ['Meters'], summary: 'Delete a meter that no plan prices' },
    successStatus: 204,
    errors: ['meter_not_found', 'resource_in_use'],
  })
  .input(z.object({ meterId }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedMeter(ctx.db, ctx.actor.organizationId, input.meterId);
    const { service } = existing;
    await changeCatalog(ctx.db, service.sellerId, async (tx) => {
      const prices = await tx.planMeterPrice.count({ where: { meterId: existing.id } });
      if (prices) throw new ApiError('resource_in_use', `${prices} plan(s) price this meter; delete those plan meter prices first.`);
      await tx.meter.delete({ where: { id: existing.id } });
    });
  });
