import { z } from 'zod';
import { seller } from '../../../shared/schemas/sellers.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { sellerWithHostnames, toSellerWire } from './wire.js';

/** Sellers are the top of the catalog: their parent is the caller's organization itself. */
export const listSellers = catalogReadProcedure
  .meta({ openapi: { method: 'GET', path: '/v1/sellers', tags: ['Sellers'], summary: "List the organization's sellers" } })
  .input(z.object({}))
  .output(z.object({ sellers: z.array(seller) }))
  .query(async ({ ctx }) => {
    const rows = await ctx.db.seller.findMany({
      where: { organizationId: ctx.actor.organizationId },
      include: sellerWithHostnames,
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return { sellers: rows.map((row) => toSellerWire(row, ctx.config.payDomain)) };
  });
