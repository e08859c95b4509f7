import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { putRoutesInput, type Route, route } from '../../shared/schemas/routes.js';
import { serviceId } from '../../shared/schemas/services.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { changeCatalog, ownedService } from './guards.js';

/**
 * A service's declared routes, read and replaced as one list: a seller states its API's priced
 * routes the way it would upload a description of them, and the discovery documents follow at once
 * (the write marks the seller's catalog changed). Kept as JSON on the service: always read whole.
 */

/** The stored list; a row written before routes existed holds `[]`. */
export function routesOf(service: { routesJson: string }): Route[] {
  return JSON.parse(service.routesJson) as Route[];
}

export const getRoutes = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/services/{serviceId}/routes', tags: ['Routes'], summary: "Read a service's declared routes" },
    errors: ['service_not_found'],
  })
  .input(z.object({ serviceId }))
  .output(z.object({ routes: z.array(route) }))
  .query(async ({ ctx, input }) => ({ routes: routesOf(await ownedService(ctx.db, ctx.actor.organizationId, input.serviceId)) }));

export const putRoutes = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'PUT',
      path: '/v1/services/{serviceId}/routes',
      tags: ['Routes'],
      summary: "Replace a service's declared routes (what agents discover at the pay URL)",
    },
    errors: ['service_not_found', 'meter_not_found'],
  })
  .input(putRoutesInput)
  .output(z.object({ routes: z.array(route) }))
  .mutation(async ({ ctx, input }) => {
    const service = await ownedService(ctx.db, ctx.actor.organizationId, input.serviceId);
    const named = [...new Set(input.routes.flatMap((r) => r.usage.map((u) => u.meterSlug)))];
    const meters = await ctx.db.meter.findMany({ where: { serviceId: service.id, key: { in: named } }, select: { key: true } });
    const unknown = named.filter((key) => !meters.some((m) => m.key === key));
    if (unknown.length) throw new ApiError('meter_not_found', `The service has no meter ${unknown.map((k) => `"${k}"`).join(', ')}.`);
    await changeCatalog(ctx.db, service.sellerId, (tx) =>
      tx.service.update({ where: { id: service.id }, data: { routesJson: JSON.stringify(input.routes) } }),
    );
    return { routes: input.routes };
  });

export const routesRouter = router({ get: getRoutes, put: putRoutes });
