import { z } from 'zod';
import { service, updateServiceInput } from '../../../shared/schemas/services.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedService } from '../owned.js';
import { toServiceWire } from './wire.js';

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
