import { z } from 'zod';
import { sellerId } from '../../../shared/schemas/sellers.js';
import { service } from '../../../shared/schemas/services.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedSeller } from '../owned.js';
import { toServiceWire } from './wire.js';

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
