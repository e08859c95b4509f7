import { z } from 'zod';
import { planMeterPrice, updatePlanMeterPriceInput } from '../../../shared/schemas/plans.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedPlanMeterPrice } from '../owned.js';
import { requireWholeCentsOnPayg } from './whole-cents.js';
import { toPlanMeterPriceWire } from './wire.js';

export const updatePlanMeterPrice = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'PATCH',
      path: '/v1/plan-meter-prices/{planMeterPriceId}',
      tags: ['Plan meter prices'],
      summary: 'Update a plan meter price',
    },
    errors: ['plan_meter_price_not_found', 'payg_price_not_whole_cents'],
  })
  .input(updatePlanMeterPriceInput)
  .output(z.object({ planMeterPrice }))
  .mutation(async ({ ctx, input }) => {
    const existing = await ownedPlanMeterPrice(ctx.db, ctx.actor.organizationId, input.planMeterPriceId);
    if (input.priceUsd !== undefined) requireWholeCentsOnPayg(existing.plan.billingMode, input.priceUsd);
    const { service } = existing.plan;
    const row = await changeCatalog(ctx.db, service.sellerId, (tx) =>
      tx.planMeterPrice.update({
        where: { id: existing.id },
        data: {
          priceMicros: input.priceUsd,
          unitSize: input.unitSize,
          includedUnits: input.includedUnits,
          defaultMaxQuantity: input.defaultMaxQuantity,
        },
        include: { meter: true },
      }),
    );
    return { planMeterPrice: toPlanMeterPriceWire(row) };
  });
