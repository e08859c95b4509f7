import type { DiscoveryCatalog } from '../contract.js';
import { pathParameters, QUERY_METHODS } from '../schemas/routes.js';

/**
 * What keeps a seller's listing from being complete (docs/decisions.md#D-220): each gap an agent
 * or a crawler would meet, named where the seller fixes it. A listing with no issue is complete.
 */
export const LISTING_ISSUES = {
  no_routes: 'No route is declared: the documents list nothing to call (PUT /v1/services/{serviceId}/routes).',
  payments_unavailable:
    'Calls cannot be paid here: this hub takes no payments, the seller has no payToAddress, or a sandbox seller is on a live rail.',
  route_not_priced: 'No pay-as-you-go plan of the service prices this route’s usage: it carries no price.',
  route_declared_twice: 'Another service declares the same method and path; the documents show the first.',
  route_description_missing: 'The route has no description.',
  route_example_missing: 'The route has no example of its answer.',
  route_example_incomplete: 'The example gives no value for a path parameter, or no body for a method that takes one.',
  price_description_missing: 'The price has no description (a pricing note agents read beside it).',
} as const;
export type ListingIssueCode = keyof typeof LISTING_ISSUES;

export type ListingIssue = {
  code: ListingIssueCode;
  message: string;
  /** What it is about: `GET /forecast/{city}` (a route) or `forecast/payg/calls` (service/plan/meter of a price); absent for the seller. */
  subject?: string;
};

export function listingReport(catalog: DiscoveryCatalog): { complete: boolean; issues: ListingIssue[] } {
  const issues: ListingIssue[] = [];
  const issue = (code: ListingIssueCode, subject?: string) =>
    issues.push({ code, message: LISTING_ISSUES[code], ...(subject ? { subject } : {}) });
  if (!catalog.routes.length) issue('no_routes');
  if (!catalog.payment) issue('payments_unavailable');
  const seen = new Set<string>();
  for (const { route, price } of catalog.routes) {
    const subject = `${route.method} ${route.path}`;
    if (seen.has(subject)) issue('route_declared_twice', subject);
    seen.add(subject);
    if (!price) issue('route_not_priced', subject);
    if (!route.description) issue('route_description_missing', subject);
    if (route.example?.response === undefined) issue('route_example_missing', subject);
    const needsBody = !QUERY_METHODS.includes(route.method);
    const params = pathParameters(route.path);
    if (params.some((name) => route.example?.pathParams?.[name] === undefined) || (needsBody && !route.example?.body)) {
      issue('route_example_incomplete', subject);
    }
  }
  for (const p of catalog.prices) {
    if (!p.description) issue('price_description_missing', `${p.serviceSlug}/${p.planSlug}/${p.meterSlug}`);
  }
  return { complete: issues.length === 0, issues };
}
