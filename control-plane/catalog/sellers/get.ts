import { z } from 'zod';
import { seller, sellerId } from '../../../shared/schemas/sellers.js';
import { catalogReadProcedure } from '../../trpc/procedures.js';
import { ownedSeller } from '../owned.js';
import { sellerWithHostnames, toSellerWire } from './wire.js';

export const getSeller = catalogReadProcedure
  .meta({
    openapi: { method: 'GET', path: '/v1/sellers/{sellerId}', tags: ['Sellers'], summary: 'Read a seller' },
    errors: ['seller_not_found'],
  })
  .input(z.object({ sellerId }))
  .output(z.object({ seller }))
  .query(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const row = await ctx.db.seller.findUniqueOrThrow({ where: { id: input.sellerId }, include: sellerWithHostnames });
    return { seller: toSellerWire(row, ctx.config.payDomain) };
  });
