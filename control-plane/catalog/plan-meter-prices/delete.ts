import { z } from 'zod';
import { planMeterPriceId } from '../../../shared/schemas/plans.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedPlanMeterPrice } from '../owned.js';

export const deletePlanMeterPrice = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'DELETE',
      path: '/v1/plan-meter-prices/{planMeterPriceId}',
      tags: ['Plan meter prices'],
      summary: 'Delete a plan meter price',
    },
    successStatus: 204,
    errors: ['plan_meter_price_not_found'],
  })
  .input(z.object({ planMeterPriceId }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedPlanMeterPrice(ctx.db, ctx.actor.organizationId, input.planMeterPriceId);
    const { service } = existing.plan;
    await changeCatalog(ctx.db, service.sellerId, async (tx) => {
      await tx.planMeterPrice.delete({ where: { id: existing.id } });
    });
  });
