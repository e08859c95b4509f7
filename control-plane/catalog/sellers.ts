import { z } from 'zod';
import type { Seller } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { payHostOf } from '../../shared/pay-host.js';
import {
  createSellerInput,
  putStatefulAccessInput,
  type SettlementTiming,
  seller,
  sellerId,
  statefulAccess,
  statefulAccessLater,
  statefulAccessSettings,
  updateSellerInput,
  x402SchemesOf,
} from '../../shared/schemas/sellers.js';
import type { Db } from '../db/client.js';
import { withUniqueCodes } from '../db/constraints.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure, catalogWriteProcedure } from '../trpc/procedures.js';
import { accessEndpointUrlOf } from './access-endpoint.js';
import { changeCatalog, ownedSeller, refuseWhileBuyersHoldPlans } from './guards.js';
import { refuseForbiddenTarget } from './outbound-target.js';

/** What to load with a seller to put it on the wire. */
export const sellerWithHostnames = { hostnames: { select: { hostname: true }, orderBy: { hostname: 'asc' } } } as const;

export function toSellerWire(row: Seller & { hostnames: { hostname: string }[] }, payDomain: string): z.infer<typeof seller> {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    payHost: payHostOf(row.slug, payDomain),
    upstreamBaseUrl: row.upstreamBaseUrl,
    payToAddress: row.payToAddress,
    networks: JSON.parse(row.networksJson) as string[],
    hostnames: row.hostnames.map((h) => h.hostname),
    settlement: row.settlement as SettlementTiming,
    x402Schemes: x402SchemesOf(row.x402SchemesJson),
    sandbox: row.sandbox,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const createSeller = catalogWriteProcedure
  .meta({
    openapi: { method: 'POST', path: '/v1/sellers', tags: ['Sellers'], summary: 'Create a seller' },
    successStatus: 201,
    errors: ['duplicate_slug', 'duplicate_hostname', 'upstream_not_allowed'],
  })
  .input(createSellerInput)
  .output(z.object({ seller }))
  .mutation(async ({ ctx, input }) => {
    const hostnames = input.hostnames ?? [];
    refuseHostnamesUnderPayDomain(hostnames, ctx.config.payDomain);
    await refuseForbiddenTarget(ctx, 'upstreamBaseUrl', input.upstreamBaseUrl, hostnames);
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
            settlement: input.settlement,
            ...(input.x402Schemes ? { x402SchemesJson: JSON.stringify(input.x402Schemes) } : {}),
            sandbox: input.sandbox ?? false,
          },
        });
        await replaceHostnames(tx, id, hostnames);
      }),
    );
    const row = await ctx.db.seller.findUniqueOrThrow({ where: { id }, include: sellerWithHostnames });
    return { seller: toSellerWire(row, ctx.config.payDomain) };
  });

/**
 * Deletes a seller with its whole catalog (hostnames, signing secrets, services, meters, plans,
 * prices). A seller that buyers hold accounts with, or that has taken payments, is refused: those
 * are obligations and history, not catalog.
 */
export const deleteSeller = catalogWriteProcedure
  .meta({
    openapi: { method: 'DELETE', path: '/v1/sellers/{sellerId}', tags: ['Sellers'], summary: 'Delete a seller and its catalog' },
    successStatus: 204,
    errors: ['seller_not_found', 'resource_in_use'],
  })
  .input(z.object({ sellerId }))
  .output(z.void())
  .mutation(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    await ctx.db.$transaction(async (tx) => {
      await refuseWhileBuyersHoldPlans(tx, { sellerId: input.sellerId });
      if (await tx.paymentAttempt.count({ where: { sellerId: input.sellerId } })) {
        throw new ApiError('resource_in_use', 'The seller has payment history; it cannot be deleted.');
      }
      await tx.seller.delete({ where: { id: input.sellerId } });
    });
  });

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

type Tx = Pick<Db, 'sellerHostname'>;

/**
 * Custom hostnames must stay outside the pay domain: every name under it is already a seller's
 * `{slug}.{pay domain}` (or could become one), and the proxy resolves those by slug first.
 */
export function refuseHostnamesUnderPayDomain(hostnames: readonly string[], payDomain: string): void {
  const clash = hostnames.find((host) => host === payDomain || host.endsWith(`.${payDomain}`));
  if (clash)
    throw ApiError.validation(`hostnames: ${clash} is under the pay domain ${payDomain}; the seller's slug already names its host there`);
}

/** Makes `hostnames` the seller's whole set. A hostname serving another seller is `duplicate_hostname`. */
export async function replaceHostnames(tx: Tx, sellerId: string, hostnames: readonly string[]): Promise<void> {
  await tx.sellerHostname.deleteMany({ where: { sellerId, hostname: { notIn: [...hostnames] } } });
  const kept = await tx.sellerHostname.findMany({ where: { sellerId }, select: { hostname: true } });
  const existing = new Set(kept.map((h) => h.hostname));
  for (const hostname of hostnames) {
    if (!existing.has(hostname)) await tx.sellerHostname.create({ data: { hostname, sellerId } });
  }
}

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
      description: 'The spec first variant by default; `?variant=later` answers the later one (`stateful`, `accessEndpointUrl`).',
    },
    errors: ['seller_not_found'],
  })
  .input(
    z.object({
      sellerId,
      variant: z.enum(['first', 'later']).default('first').meta({ description: 'Which variant of the answer to give' }),
    }),
  )
  .output(z.union([statefulAccess, statefulAccessLater]))
  .query(async ({ ctx, input }) => {
    const seller = await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    if (input.variant === 'first') return toWire(seller);
    return { stateful: seller.stateful, accessEndpointUrl: accessEndpointUrlOf(seller) };
  });

/**
 * The operator's switch for a seller's storefront (`hub seller stateful-access`): `sales` gates new
 * purchases, `servicing` key redeem and recovery. Never reachable through the API; a running hub
 * sees the change within a second (it goes through the catalog's change feed).
 */
export async function setStatefulFlags(
  db: Db,
  sellerId: string,
  flags: { sales?: boolean | undefined; servicing?: boolean | undefined },
): Promise<z.infer<typeof statefulAccess> & { name: string }> {
  const found = await db.seller.findUnique({ where: { id: sellerId } });
  if (!found) throw new ApiError('seller_not_found');
  const data = {
    ...(flags.sales === undefined ? {} : { salesEnabled: flags.sales }),
    ...(flags.servicing === undefined ? {} : { servicingEnabled: flags.servicing }),
  };
  const seller = Object.keys(data).length
    ? await changeCatalog(db, sellerId, (tx) => tx.seller.update({ where: { id: sellerId }, data }))
    : found;
  return { ...toWire(seller), name: seller.name };
}

export const putStatefulAccess = catalogWriteProcedure
  .meta({
    openapi: {
      method: 'PUT',
      path: '/v1/sellers/{sellerId}/stateful-access',
      tags: ['Sellers'],
      summary: "Override the seller's account endpoint, or make the seller stateful",
    },
    errors: ['seller_not_found', 'upstream_not_allowed'],
  })
  .input(putStatefulAccessInput)
  .output(statefulAccessSettings)
  .mutation(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    if (input.accessEndpointUrl) await refuseForbiddenTarget(ctx, 'accessEndpointUrl', input.accessEndpointUrl);
    const seller = await changeCatalog(ctx.db, input.sellerId, (tx) =>
      tx.seller.update({
        where: { id: input.sellerId },
        data: {
          ...(input.accessEndpointUrl === undefined ? {} : { accessEndpointUrl: input.accessEndpointUrl }),
          ...(input.stateful === undefined ? {} : { stateful: input.stateful }),
          ...(input.accountWriteVariant === undefined ? {} : { accountWriteVariant: input.accountWriteVariant }),
        },
      }),
    );
    return { ...toWire(seller), stateful: seller.stateful, accountWriteVariant: seller.accountWriteVariant as 'original' | 'later' };
  });

/** Changes the fields given; `hostnames` and `networks`, when given, replace the whole list. */
export const updateSeller = catalogWriteProcedure
  .meta({
    openapi: { method: 'PATCH', path: '/v1/sellers/{sellerId}', tags: ['Sellers'], summary: 'Update a seller' },
    errors: ['seller_not_found', 'duplicate_slug', 'duplicate_hostname', 'upstream_not_allowed'],
  })
  .input(updateSellerInput)
  .output(z.object({ seller }))
  .mutation(async ({ ctx, input }) => {
    const { sellerId: id, hostnames, networks, x402Schemes, ...fields } = input;
    await ownedSeller(ctx.db, ctx.actor.organizationId, id);
    if (hostnames) refuseHostnamesUnderPayDomain(hostnames, ctx.config.payDomain);
    if (fields.upstreamBaseUrl) await refuseForbiddenTarget(ctx, 'upstreamBaseUrl', fields.upstreamBaseUrl, hostnames);
    await withUniqueCodes({ Seller: 'duplicate_slug', SellerHostname: 'duplicate_hostname' }, () =>
      changeCatalog(ctx.db, id, async (tx) => {
        await tx.seller.update({
          where: { id },
          data: {
            ...fields,
            ...(networks ? { networksJson: JSON.stringify(networks) } : {}),
            ...(x402Schemes ? { x402SchemesJson: JSON.stringify(x402Schemes) } : {}),
          },
        });
        if (hostnames) await replaceHostnames(tx, id, hostnames);
      }),
    );
    const row = await ctx.db.seller.findUniqueOrThrow({ where: { id }, include: sellerWithHostnames });
    return { seller: toSellerWire(row, ctx.config.payDomain) };
  });

export const sellersRouter = router({
  create: createSeller,
  get: getSeller,
  list: listSellers,
  update: updateSeller,
  delete: deleteSeller,
  getStatefulAccess,
  putStatefulAccess,
});
