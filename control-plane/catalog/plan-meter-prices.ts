import { z } from 'zod';
import type { Meter, PlanMeterPrice } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { formatUsd, isWholeCents } from '../../shared/money.js';
import {
  createPlanMeterPriceInput,
  planId,
  planMeterPrice,
  planMeterPriceId,
  updatePlanMeterPriceInput,
} from '../../shared/schemas/plans.js';
import { withUniqueCodes } from '../db/constraints.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { changeCatalog, ownedMeter, ownedPlan, ownedPlanMeterPrice } from './guards.js';

export function toPlanMeterPriceWire(row: PlanMeterPrice & { meter: Meter }): z.infer<typeof planMeterPrice> {
  return {
    id: row.id,
    planId: row.planId,
    meter: { id: row.meter.id, key: row.meter.key, unit: row.meter.unit },
    priceUsd: formatUsd(row.priceMicros),
    unitSize: row.unitSize,
    includedUnits: row.includedUnits,
    defaultMaxQuantity: row.defaultMaxQuantity,
    description: row.description,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

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
            description: input.description ?? null,
          },
          include: { meter: true },
        }),
      ),
    );
    return { planMeterPrice: toPlanMeterPriceWire(row) };
  });

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
          description: input.description,
        },
        include: { meter: true },
      }),
    );
    return { planMeterPrice: toPlanMeterPriceWire(row) };
  });

/** Pay-as-you-go prices are charged per call in whole cents (spec: Plan meter price › Rules). */
export function requireWholeCentsOnPayg(billingMode: string, priceMicros: bigint): void {
  if (billingMode === 'payg' && !isWholeCents(priceMicros)) throw new ApiError('payg_price_not_whole_cents');
}

export const planMeterPricesRouter = router({
  create: createPlanMeterPrice,
  get: getPlanMeterPrice,
  list: listPlanMeterPrices,
  update: updatePlanMeterPrice,
  delete: deletePlanMeterPrice,
});
