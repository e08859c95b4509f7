/**
 * The seven reasons a usage check can deny (spec: Errors › Usage endpoints), listed in their order
 * of precedence: when several apply, the one earliest in this list is the answer. A report fails
 * with the same code (as its HTTP error) wherever a check would have denied, and the proxy puts
 * the same code in `hub-usage-error` when usage it captured from `hub-usage` is refused.
 *
 * The order follows the spec's table and the way a request is resolved: first what the seller
 * named (the service), then who stands behind the request and in what state (access, its start
 * and its period), then the items (meter, price) and last whether they fit (allowance).
 */
export const USAGE_DENIALS = [
  'service_not_found',
  'access_not_found',
  'access_inactive',
  'plan_expired',
  'meter_not_found',
  'meter_not_priced',
  'usage_exhausted',
] as const;

export type UsageDenial = (typeof USAGE_DENIALS)[number];

export function isUsageDenial(code: string): code is UsageDenial {
  return (USAGE_DENIALS as readonly string[]).includes(code);
}
