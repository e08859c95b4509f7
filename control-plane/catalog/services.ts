import { z } from 'zod';
import type { Service } from '../../generated/prisma/sqlite/client.js';
import { newId } from '../../shared/ids.js';
import { sellerId } from '../../shared/schemas/sellers.js';
import { createServiceInput, service, serviceId, updateServiceInput } from '../../shared/schemas/services.js';
import { withUniqueCodes } from '../db/constraints.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { changeCatalog, ownedSeller, ownedService, refuseWhileBuyersHoldPlans, refuseWhilePurchasesOpen } from './guards.js';

export function toServiceWire(row: Service): z.infer<typeof service> {
  return {
    id: row.id,
    sellerId: row.sellerId,
    name: row.name,
    slug: row.slug,
    description: row.description,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const createService = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/services', tags: ['Services'], summary: 'Create a service of a seller' },
    successStatus: 201,
    errors: ['seller_not_found', 'duplicate_slug'],
  })
  .input(createServiceInput)
  .output(z.object({ service }))
  .mutation(async ({ ctx, input }) => {
    const { organizationId } = ctx.actor;
    await ownedSeller(ctx.db, organizationId, input.sellerId);
    const row = await withUniqueCodes({ Service: 'duplicate_slug' }, () =>
      changeCatalog(ctx.db, input.sellerId, (tx) =>
        tx.service.create({
          data: {
            id: newId('service'),
            organizationId,
            sellerId: input.sellerId,
            name: input.name,
            slug: input.slug,
            description: input.description ?? null,
          },
        }),
      ),
    );
    return { service: toServiceWire(row) };
  });

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
      const plans = await tx.plan.findMany({ where: { serviceId: existing.id }, select: { id: true } });
      await refuseWhilePurchasesOpen(
        tx,
        plans.map((plan) => plan.id),
      );
      await tx.service.delete({ where: { id: existing.id } });
    });
  });

export const getService = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/services/{serviceId}', tags: ['Services'], summary: 'Read a service' },
    errors: ['service_not_found'],
  })
  .input(z.object({ serviceId }))
  .output(z.object({ service }))
  .query(async ({ ctx, input }) => ({ service: toServiceWire(await ownedService(ctx.db, ctx.actor.organizationId, input.serviceId)) }));

export const listServices = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/services', tags: ['Services'], summary: "List a seller's services" },
    errors: ['seller_not_found'],
  })
  .input(z.object({ sellerId }))
  .output(z.object({ services: z.array(service) }))
  .query(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const rows = await ctx.db.service.findMany({ where: { sellerId: input.sellerId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return { services: rows.map(toServiceWire) };
  });

export const updateService = catalogWriteProcedure
  .meta({
    openapi: { method: 'PATCH', path: '/v1/services/{serviceId}', tags: ['Services'], summary: 'Update a service' },
    errors: ['service_not_found', 'duplicate_slug'],
  })
  .input(updateServiceInput)
  .output(z.object({ service }))
  .mutation(async ({ ctx, input }) => {
    const { serviceId: id, ...fields } = input;
    const existing = await ownedService(ctx.db, ctx.actor.organizationId, id);
    const row = await withUniqueCodes({ Service: 'duplicate_slug' }, () =>
      changeCatalog(ctx.db, existing.sellerId, (tx) => tx.service.update({ where: { id }, data: fields })),
    );
    return { service: toServiceWire(row) };
  });

export const servicesRouter = router({
  create: createService,
  get: getService,
  list: listServices,
  update: updateService,
  delete: deleteService,
});
