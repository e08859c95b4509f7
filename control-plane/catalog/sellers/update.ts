import { z } from 'zod';
import { seller, updateSellerInput } from '../../../shared/schemas/sellers.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedSeller } from '../owned.js';
import { refuseHostnamesUnderPayDomain, replaceHostnames } from './hostnames.js';
import { sellerWithHostnames, toSellerWire } from './wire.js';

/** Changes the fields given; `hostnames` and `networks`, when given, replace the whole list. */
export const updateSeller = catalogWriteProcedure
  .meta({
    openapi: { method: 'PATCH', path: '/v1/sellers/{sellerId}', tags: ['Sellers'], summary: 'Update a seller' },
    errors: ['seller_not_found', 'duplicate_slug', 'duplicate_hostname'],
  })
  .input(updateSellerInput)
  .output(z.object({ seller }))
  .mutation(async ({ ctx, input }) => {
    const { sellerId: id, hostnames, networks, ...fields } = input;
    await ownedSeller(ctx.db, ctx.actor.organizationId, id);
    if (hostnames) refuseHostnamesUnderPayDomain(hostnames, ctx.config.payDomain);
    await withUniqueCodes({ Seller: 'duplicate_slug', SellerHostname: 'duplicate_hostname' }, () =>
      changeCatalog(ctx.db, id, async (tx) => {
        await tx.seller.update({
          where: { id },
          data: { ...fields, ...(networks ? { networksJson: JSON.stringify(networks) } : {}) },
        });
        if (hostnames) await replaceHostnames(tx, id, hostnames);
      }),
    );
    const row = await ctx.db.seller.findUniqueOrThrow({ where: { id }, include: sellerWithHostnames });
    return { seller: toSellerWire(row, ctx.config.payDomain) };
  });
