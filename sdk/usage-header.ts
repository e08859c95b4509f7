import type { ServerResponse } from 'node:http';
import { HUB_HEADERS } from '../shared/hub-headers.js';
import { assertSlug, assertUsageItems, assertUsageQuantity } from '../shared/usage.js';

/**
 * The `hub-usage` response header (spec: Headers on proxied requests › Response from the seller's
 * API): a JSON array of `{ serviceSlug, meterSlug, quantity }` that settles usage synchronously.
 * Only a delivered 2xx may carry it; hub strips it before the agent sees the response.
 */
export type { UsageHeaderItem } from '../shared/usage.js';

import type { UsageHeaderItem } from '../shared/usage.js';

/**
 * The header value; throws for more than 100 items, a slug empty or over 200 characters, or a
 * quantity outside 0…2,147,483,647: hub would refuse the header (`invalid_usage_header`).
 */
export function usageHeaderValue(items: readonly UsageHeaderItem[]): string {
  assertUsageItems(items, 'hub-usage');
  items.forEach((item, i) => {
    assertSlug(item.serviceSlug, `hub-usage[${i}].serviceSlug`);
    assertSlug(item.meterSlug, `hub-usage[${i}].meterSlug`);
    assertUsageQuantity(item.quantity, `hub-usage[${i}].quantity`);
  });
  // Rebuilt field by field so nothing else on the caller's objects leaks into the header.
  return JSON.stringify(items.map(({ serviceSlug, meterSlug, quantity }) => ({ serviceSlug, meterSlug, quantity })));
}

/**
 * Sets `hub-usage` on a response about to be sent. Refuses a response whose status is not 2xx:
 * usage on a refusal would bill for nothing.
 */
export function setUsageHeader(res: ServerResponse, items: readonly UsageHeaderItem[]): void {
  if (res.statusCode < 200 || res.statusCode > 299)
    throw new RangeError(`hub-usage goes on 2xx responses only, this one is ${res.statusCode}`);
  res.setHeader(HUB_HEADERS.usage, usageHeaderValue(items));
}

export { parseUsageHeader } from '../shared/usage.js';
