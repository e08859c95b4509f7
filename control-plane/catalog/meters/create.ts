import { z } from 'zod';
import { newId } from '../../../shared/ids.js';
import { createMeterInput, meter } from '../../../shared/schemas/meters.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedService } from '../owned.js';
import { toMeterWire } from './wire.js';

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
