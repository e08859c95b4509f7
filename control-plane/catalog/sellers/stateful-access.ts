import { z } from 'zod';
import type { Seller } from '../../../generated/prisma/sqlite/client.js';
import { putStatefulAccessInput, sellerId, statefulAccess } from '../../../shared/schemas/sellers.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../../trpc/procedures.js';
import { changeCatalog } from '../change-catalog.js';
import { ownedSeller } from '../owned.js';

/**
 * The seller's account endpoint (spec: Seller account endpoint): the origin of the upstream base
 * URL plus `/zeroclick/access`, any path dropped, unless the seller set an override.
 * `salesEnabled` and `servicingEnabled` are the operator's to change, never this API's.
 */
export function accessEndpointUrlOf(seller: { upstreamBaseUrl: string; accessEndpointUrl: string | null }): string {
  return seller.accessEndpointUrl ?? `${new URL(seller.upstreamBaseUrl).origin}/zeroclick/access`;
}

function toWire(seller: Seller): z.infer<typeof statefulAccess> {
  return { accessEndpointUrl: accessEndpointUrlOf(seller), salesEnabled: seller.salesEnabled, servicingEnabled: seller.servicingEnabled };
}

export const getStatefulAccess = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/sellers/{sellerId}/stateful-access',
      tags: ['Sellers'],
      summary: "Read the seller's account endpoint and flags",
    },
    errors: ['seller_not_found'],
  })
  .input(z.object({ sellerId }))
  .output(statefulAccess)
  .query(async ({ ctx, input }) => toWire(await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId)));

export const putStatefulAccess = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'PUT',
      path: '/v1/sellers/{sellerId}/stateful-access',
      tags: ['Sellers'],
      summary: "Override the seller's account endpoint",
    },
    errors: ['seller_not_found'],
  })
  .input(putStatefulAccessInput)
  .output(statefulAccess)
  .mutation(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const seller = await changeCatalog(ctx.db, input.sellerId, (tx) =>
      tx.seller.update({ where: { id: input.sellerId }, data: { accessEndpointUrl: input.accessEndpointUrl } }),
    );
    return toWire(seller);
  });
