import { z } from 'zod';
import { newId } from '../../../shared/ids.js';
import { createSellerInput, seller } from '../../../shared/schemas/sellers.js';
import { withUniqueCodes } from '../../db/constraints.js';
import { catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { refuseHostnamesUnderPayDomain, replaceHostnames } from './hostnames.js';
import { sellerWithHostnames, toSellerWire } from './wire.js';

export const createSeller = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/sellers', tags: ['Sellers'], summary: 'Create a seller' },
    successStatus: 201,
    errors: ['duplicate_slug', 'duplicate_hostname'],
  })
  .input(createSellerInput)
  .output(z.object({ seller }))
  .mutation(async ({ ctx, input }) => {
    const hostnames = input.hostnames ?? [];
    refuseHostnamesUnderPayDomain(hostnames, ctx.config.payDomain);
    const id = newId('seller');
    await withUniqueCodes({ Seller: 'duplicate_slug', SellerHostname: 'duplicate_hostname' }, () =>
      changeCatalog(ctx.db, id, async (tx) => {
        await tx.seller.create({
          data: {
            id,
            organizationId: ctx.actor.organizationId,
            name: input.name,
            slug: input.slug,
            upstreamBaseUrl: input.upstreamBaseUrl,
            payToAddress: input.payToAddress ?? null,
            networksJson: JSON.stringify(input.networks ?? []),
          },
        });
        await replaceHostnames(tx, id, hostnames);
      }),
    );
    const row = await ctx.db.seller.findUniqueOrThrow({ where: { id }, include: sellerWithHostnames });
    return { seller: toSellerWire(row, ctx.config.payDomain) };
  });
