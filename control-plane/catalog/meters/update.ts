import { z } from 'zod';
import { meter, updateMeterInput } from '../../../shared/schemas/meters.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedMeter } from '../owned.js';
import { toMeterWire } from './wire.js';

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
