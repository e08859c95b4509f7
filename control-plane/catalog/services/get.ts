import { z } from 'zod';
import { service, serviceId } from '../../../shared/schemas/services.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedService } from '../owned.js';
import { toServiceWire } from './wire.js';

export const getService = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/services/{serviceId}', tags: ['Services'], summary: 'Read a service' },
    errors: ['service_not_found'],
  })
  .input(z.object({ serviceId }))
  .output(z.object({ service }))
  .query(async ({ ctx, input }) => ({ service: toServiceWire(await ownedService(ctx.db, ctx.actor.organizationId, input.serviceId)) }));
