import { z } from 'zod';
import type { Meter } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { createMeterInput, meter, meterId, updateMeterInput } from '../../shared/schemas/meters.js';
import { serviceId } from '../../shared/schemas/services.js';
import { withUniqueCodes } from '../db/constraints.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { changeCatalog, ownedMeter, ownedService } from './guards.js';

export function toMeterWire(row: Meter): z.infer<typeof meter> {
  return {
    id: row.id,
    serviceId: row.serviceId,
    key: row.key,
    unit: row.unit,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const createMeter = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/meters', tags: ['Meters'], summary: 'Create a meter of a service' },
    successStatus: 201,
    errors: ['service_not_found', 'duplicate_key'],
  })
  .input(createMeterInput)
  .output(z.object({ meter }))
  .mutation(async ({ ctx, input }) => {
    const { organizationId } = ctx.actor;
    const service = await ownedService(ctx.db, organizationId, input.serviceId);
    const row = await withUniqueCodes({ Meter: 'duplicate_key' }, () =>
      changeCatalog(ctx.db, service.sellerId, (tx) =>
        tx.meter.create({
          data: { id: newId('meter'), organizationId, serviceId: service.id, key: input.key, unit: input.unit, name: input.name ?? null },
        }),
      ),
    );
    return { meter: toMeterWire(row) };
  });

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

export const getMeter = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/meters/{meterId}', tags: ['Meters'], summary: 'Read a meter' },
    errors: ['meter_not_found'],
  })
  .input(z.object({ meterId }))
  .output(z.object({ meter }))
  .query(async ({ ctx, input }) => ({ meter: toMeterWire(await ownedMeter(ctx.db, ctx.actor.organizationId, input.meterId)) }));

export const listMeters = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/meters', tags: ['Meters'], summary: "List a service's meters" },
    errors: ['service_not_found'],
  })
  .input(z.object({ serviceId }))
  .output(z.object({ meters: z.array(meter) }))
  .query(async ({ ctx, input }) => {
    await ownedService(ctx.db, ctx.actor.organizationId, input.serviceId);
    const rows = await ctx.db.meter.findMany({ where: { serviceId: input.serviceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return { meters: rows.map(toMeterWire) };
  });

export const updateMeter = catalogWriteProcedure
  .meta({
    openapi: { method: 'PATCH', path: '/v1/meters/{meterId}', tags: ['Meters'], summary: 'Update a meter' },
    errors: ['meter_not_found', 'duplicate_key'],
  })
  .input(updateMeterInput)
  .output(z.object({ meter }))
  .mutation(async ({ ctx, input }) => {
    const { meterId: id, ...fields } = input;
    const existing = await ownedMeter(ctx.db, ctx.actor.organizationId, id);
    const { service } = existing;
    const row = await withUniqueCodes({ Meter: 'duplicate_key' }, () =>
      changeCatalog(ctx.db, service.sellerId, (tx) => tx.meter.update({ where: { id }, data: fields })),
    );
    return { meter: toMeterWire(row) };
  });

export const metersRouter = router({ create: createMeter, get: getMeter, list: listMeters, update: updateMeter, delete: deleteMeter });
