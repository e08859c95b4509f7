import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { type PageViewInput, pageViewInput } from '../../shared/schemas/page-views.js';
import type { ControlPlaneServices } from '../context.js';
import { routeProcedure, servedRoute } from '../trpc/served-route.js';
import { countryCode, pagePath, referrerHost } from './normalize.js';
import { acceptsMarkdown, viewerClass, viewerId } from './viewer.js';

/**
 * `POST /v1/page-views` (spec: Page-view report request body and rules): checked, reduced to what
 * analytics keeps (no raw user agent or IP, ever), queued, and answered 204 before it is written
 * (sink.ts). A seller of another organization is 404; past the organization's budget per minute,
 * 429 `rate_limited`.
 */
export const pageViewsRoute = servedRoute({
  path: '/v1/page-views',
  scope: 'page-views:write',
  input: pageViewInput,
  run: acceptPageView,
});

export const reportPageViewProcedure = routeProcedure(
  pageViewsRoute,
  {
    openapi: {
      tags: ['Page views'],
      summary: 'Report a page view of a seller’s site',
      description:
        'Fire and forget: 204 at once, written in the background. The user agent and IP are hashed into an anonymous viewer id and discarded.',
    },
    successStatus: 204,
    errors: ['seller_not_found', 'rate_limited'],
  },
  z.void(),
);

/** Takes one page view for the organization: within its budget, of its seller, queued to be written. */
export async function acceptPageView(
  services: Pick<ControlPlaneServices, 'pageViews' | 'masterKey'>,
  organizationId: string,
  input: PageViewInput,
): Promise<undefined> {
  const retryAfterSeconds = services.pageViews.budget.take(organizationId);
  if (retryAfterSeconds !== undefined) {
    throw new ApiError('rate_limited', 'This organization reports more page views a minute than hub takes.', { retryAfterSeconds });
  }
  if ((await services.pageViews.sellerOrganization(input.seller)) !== organizationId) throw new ApiError('seller_not_found');
  const now = new Date();
  services.pageViews.sink.accept({
    id: newId('pageView'),
    organizationId,
    sellerId: input.seller,
    path: pagePath(input.path),
    status: input.status ?? null,
    durationMs: input.durationMs === undefined ? null : Math.round(input.durationMs),
    capturedAt: input.capturedAt === undefined ? null : new Date(input.capturedAt),
    journeyId: input.journeyId ?? null,
    viewerId: viewerId(services.masterKey, input.clientIp, input.userAgent, now),
    viewerClass: viewerClass(input.userAgent),
    acceptsMarkdown: acceptsMarkdown(input.accept),
    country: countryCode(input.country),
    referrerHost: referrerHost(input.referrerHost),
    createdAt: now,
  });
  return undefined;
}
