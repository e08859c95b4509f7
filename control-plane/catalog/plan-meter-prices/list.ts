import { z } from 'zod';
import { planId, planMeterPrice } from '../../../shared/schemas/plans.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedPlan } from '../owned.js';
import { toPlanMeterPriceWire } from './wire.js';

export const listPlanMeterPrices = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/plan-meter-prices', tags: ['Plan meter prices'], summary: "List a plan's meter prices" },
    errors: ['plan_not_found'],
  })
  .input(z.object({ planId }))
  .output(z.object({ planMeterPrices: z.array(planMeterPrice) }))
  .query(async ({ ctx, input }) => {
    await ownedPlan(ctx.db, ctx.actor.organizationId, input.planId);
    const rows = await ctx.db.planMeterPrice.findMany({
      where: { planId: input.planId },
      include: { meter: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return { planMeterPrices: rows.map(toPlanMeterPriceWire) };
  });
