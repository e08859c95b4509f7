import { z } from 'zod';
import { planMeterPrice, planMeterPriceId } from '../../../shared/schemas/plans.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedPlanMeterPrice } from '../owned.js';
import { toPlanMeterPriceWire } from './wire.js';

export const getPlanMeterPrice = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/plan-meter-prices/{planMeterPriceId}',
      tags: ['Plan meter prices'],
      summary: 'Read a plan meter price',
    },
    errors: ['plan_meter_price_not_found'],
  })
  .input(z.object({ planMeterPriceId }))
  .output(z.object({ planMeterPrice }))
  .query(async ({ ctx, input }) => ({
    planMeterPrice: toPlanMeterPriceWire(await ownedPlanMeterPrice(ctx.db, ctx.actor.organizationId, input.planMeterPriceId)),
  }));
