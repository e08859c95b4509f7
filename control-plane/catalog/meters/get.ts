import { z } from 'zod';
import { meter, meterId } from '../../../shared/schemas/meters.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedMeter } from '../owned.js';
import { toMeterWire } from './wire.js';

export const getMeter = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/meters/{meterId}', tags: ['Meters'], summary: 'Read a meter' },
    errors: ['meter_not_found'],
  })
  .input(z.object({ meterId }))
  .output(z.object({ meter }))
  .query(async ({ ctx, input }) => ({ meter: toMeterWire(await ownedMeter(ctx.db, ctx.actor.organizationId, input.meterId)) }));
