import { z } from 'zod';
import { creditAnalytics, pageViewAnalytics, sellerAnalytics } from '../../shared/schemas/analytics.js';
import { sellerId } from '../../shared/schemas/sellers.js';
import { ownedSeller } from '../catalog/guards.js';
import { router } from '../trpc/init.js';
import { catalogReadProcedure } from '../trpc/procedures.js';
import { creditAnalyticsFor } from './credit-analytics.js';
import { pageViewAnalyticsFor } from './page-view-analytics.js';
import { sellerAnalyticsFor } from './seller-analytics.js';
import { analyticsQuery, analyticsWindow } from './window.js';

/**
 * Seller analytics through the management API (spec: `GET /v1/analytics/sellers/{sellerId}`), and
 * the seller's page views beside it. Both count the last `days` days in `timeZone`, today
 * included, and answer from rollups: the time does not grow with the seller's traffic.
 */

const input = z.object({ sellerId }).extend(analyticsQuery.shape);

export const sellerAnalyticsRoute = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/analytics/sellers/{sellerId}',
      tags: ['Analytics'],
      summary: "A seller's calls, payments and revenue",
      description:
        'Calls, payment attempts, transactions, revenue and new wallets over the last `days` days counted in `timeZone`, with the newest transactions. Each figure is defined in docs/decisions.md › Analytics.',
    },
    errors: ['seller_not_found'],
  })
  .input(input)
  .output(z.object({ analytics: sellerAnalytics }))
  .query(async ({ ctx, input }) => {
    const seller = await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    const window = analyticsWindow(input.days, input.timeZone);
    return { analytics: await sellerAnalyticsFor(ctx.db, { id: seller.id, name: seller.name, slug: seller.slug }, window) };
  });

export const pageViewAnalyticsRoute = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/analytics/sellers/{sellerId}/page-views',
      tags: ['Analytics'],
      summary: "A seller's page views",
      description:
        'Page views reported with `POST /v1/page-views` over the last `days` days counted in `timeZone`: totals by viewer class, views per day, and the 20 top paths, countries and referrer hosts.',
    },
    errors: ['seller_not_found'],
  })
  .input(input)
  .output(z.object({ pageViews: pageViewAnalytics }))
  .query(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    return { pageViews: await pageViewAnalyticsFor(ctx.db, input.sellerId, analyticsWindow(input.days, input.timeZone)) };
  });

export const creditAnalyticsRoute = catalogReadProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/analytics/sellers/{sellerId}/credit',
      tags: ['Analytics'],
      summary: "Payers' credit with a seller",
      description:
        'The credit payers hold with the seller now (remainders of payments charged less than authorized, which later calls draw on), and what was credited and drawn over the last `days` days counted in `timeZone`.',
    },
    errors: ['seller_not_found'],
  })
  .input(input)
  .output(z.object({ credit: creditAnalytics }))
  .query(async ({ ctx, input }) => {
    await ownedSeller(ctx.db, ctx.actor.organizationId, input.sellerId);
    return { credit: await creditAnalyticsFor(ctx.db, input.sellerId, analyticsWindow(input.days, input.timeZone)) };
  });

export const analyticsRouter = router({ seller: sellerAnalyticsRoute, pageViews: pageViewAnalyticsRoute, credit: creditAnalyticsRoute });
