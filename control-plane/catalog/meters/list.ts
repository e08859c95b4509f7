import { z } from 'zod';
import { meter } from '../../../shared/schemas/meters.js';
import { serviceId } from '../../../shared/schemas/services.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedService } from '../owned.js';
import { toMeterWire } from './wire.js';

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
