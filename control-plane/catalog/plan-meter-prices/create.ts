import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { newId } from '../../../shared/ids.js';
import { createPlanMeterPriceInput, planMeterPrice } from '../../../shared/schemas/plans.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedMeter, ownedPlan } from '../owned.js';
import { requireWholeCentsOnPayg } from './whole-cents.js';
import { toPlanMeterPriceWire } from './wire.js';

export const createPlanMeterPrice = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/plan-meter-prices', tags: ['Plan meter prices'], summary: 'Price a meter on a plan' },
    successStatus: 201,
    errors: ['plan_not_found', 'meter_not_found', 'duplicate_plan_meter_price', 'payg_price_not_whole_cents'],
  })
  .input(createPlanMeterPriceInput)
  .output(z.object({ planMeterPrice }))
  .mutation(async ({ ctx, input }) => {
    const { organizationId } = ctx.actor;
    const plan = await ownedPlan(ctx.db, organizationId, input.planId);
    const meter = await ownedMeter(ctx.db, organizationId, input.meterId);
    if (meter.serviceId !== plan.serviceId) throw ApiError.validation('meterId: the meter belongs to another service than the plan');
    requireWholeCentsOnPayg(plan.billingMode, input.priceUsd);
    const { service } = plan;
    const row = await withUniqueCodes({ PlanMeterPrice: 'duplicate_plan_meter_price' }, () =>
      changeCatalog(ctx.db, service.sellerId, (tx) =>
        tx.planMeterPrice.create({
          data: {
            id: newId('planMeterPrice'),
            organizationId,
            planId: plan.id,
            meterId: meter.id,
            priceMicros: input.priceUsd,
            unitSize: input.unitSize ?? 1,
            includedUnits: input.includedUnits ?? 0,
            defaultMaxQuantity: input.defaultMaxQuantity ?? null,
          },
          include: { meter: true },
        }),
      ),
    );
    return { planMeterPrice: toPlanMeterPriceWire(row) };
  });
