import { z } from 'zod';
import { plan } from '../../../shared/schemas/plans.js';
import { serviceId } from '../../../shared/schemas/services.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedService } from '../owned.js';
import { toPlanWire } from './wire.js';

export const listPlans = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/plans', tags: ['Plans'], summary: "List a service's plans" },
    errors: ['service_not_found'],
  })
  .input(z.object({ serviceId }))
  .output(z.object({ plans: z.array(plan) }))
  .query(async ({ ctx, input }) => {
    await ownedService(ctx.db, ctx.actor.organizationId, input.serviceId);
    const rows = await ctx.db.plan.findMany({ where: { serviceId: input.serviceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return { plans: rows.map(toPlanWire) };
  });
