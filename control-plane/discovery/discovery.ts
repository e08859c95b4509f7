import { z } from 'zod';
import type { HubConfig } from '../../shared/config.js';
import { discoveryDocuments } from '../../shared/discovery/documents.js';
import { LISTING_ISSUES, listingReport } from '../../shared/discovery/listing.js';
import { payHostOf } from '../../shared/pay-host.js';
import { sellerId } from '../../shared/schemas/sellers.js';
import { ownedSeller } from '../catalog/guards.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure } from '../trpc/procedures.js';
import { discoveryCatalog } from './catalog.js';
import { tryPayUrlRoute } from './try-it.js';

/**
 * What agents see of a seller before their first 402 (docs/decisions.md#D-220): the pay URL's
 * discovery documents exactly as it serves them, and what keeps the listing from being complete.
 */

const servedDocument = <Body extends z.ZodType>(body: Body) =>
  z.object({ url: z.string(), contentType: z.string(), body: body.meta({ description: 'The document as the pay URL serves it' }) });

const discovery = z
  .object({
    payUrl: z.string().meta({ description: "The seller's pay URL the documents are rendered for" }),
    documents: z.object({
      openapi: servedDocument(z.record(z.string(), z.unknown())),
      llmsTxt: servedDocument(z.string()),
    }),
    listing: z.object({
      complete: z.boolean(),
      issues: z.array(
        z.object({
          code: z.enum(Object.keys(LISTING_ISSUES) as [keyof typeof LISTING_ISSUES]),
          message: z.string(),
          subject: z.string().optional().meta({ description: 'The route (`GET /path`) or price (`service/plan/meter`) concerned' }),
        }),
      ),
    }),
  })
  .meta({ id: 'Discovery' });

export const sellerDiscoveryRoute = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/sellers/{sellerId}/discovery',
      tags: ['Sellers'],
      summary: 'What agents discover at the pay URL, and whether the listing is complete',
    },
    errors: ['seller_not_found'],
  })
  .input(z.object({ sellerId }))
  .output(z.object({ discovery }))
  .query(async ({ ctx, input }) => {
    const seller = await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const catalog = await discoveryCatalog(ctx.db, ctx.rails, seller.id);
    if (!catalog) throw new Error('A seller just read is gone.');
    const payUrl = payUrlOf(ctx.config, seller.slug);
    const documents = discoveryDocuments(catalog, payUrl);
    const served = <T>(doc: { path: string; contentType: string; body: T }) => ({
      url: `${payUrl}${doc.path}`,
      contentType: doc.contentType,
      body: doc.body,
    });
    return {
      discovery: {
        payUrl,
        documents: { openapi: served(documents.openapi), llmsTxt: served(documents.llmsTxt) },
        listing: listingReport(catalog),
      },
    };
  });

/**
 * The seller's pay URL at its own host: https in production (behind the TLS terminator), the
 * proxy's port otherwise. A custom hostname serves the same documents with its own origin.
 */
function payUrlOf(config: HubConfig, slug: string): string {
  const host = payHostOf(slug, config.payDomain);
  return config.env === 'production' ? `https://${host}` : `http://${host}:${config.proxy.port}`;
}

export const discoveryRouter = router({ seller: sellerDiscoveryRoute, tryIt: tryPayUrlRoute });
