import { z } from 'zod';
import { newId } from '../../../shared/ids.js';
import { createServiceInput, service } from '../../../shared/schemas/services.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedSeller } from '../owned.js';
import { toServiceWire } from './wire.js';

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
